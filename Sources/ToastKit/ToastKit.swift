@_exported public import ToastModel
