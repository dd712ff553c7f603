// The programs of the getting-started guide (Sources/ToastKit/ToastKit.docc/GettingStartedWithToastKit.md), as
// written there, for the tests to run as short-lived processes on a real notification server
// (`GuideProgramTests`): `GuideExamples first` and `GuideExamples save`. Not a product.

import ToastKit

#if canImport(Glibc)
    import Glibc
#endif

switch CommandLine.arguments.dropFirst().first {
case "first":
    // "A first program".
    let toasts = ToastCenter()
    toasts.present(.success, title: "Copia terminada", message: "Se copiaron 12 fotos.")
    await toasts.flush()
case "save":
    // "A first program", waiting for what the person does.
    let toasts = ToastCenter()
    let outcome = await toasts.presentAndWait(
        ToastMessage(
            title: "¿Guardar los cambios?",
            duration: 10,
            swipeActions: ToastSwipeActions(leading: ToastAction(id: "save", title: "Guardar"), trailing: .dismiss)))
    switch outcome {
    case .actionInvoked(actionID: "save"): print("guardado")
    case .failed(let failure): print("no se pudo mostrar: \(failure)")
    default: print("sin guardar: \(outcome)")  // the "dismiss" button, closed, expired…
    }
default:
    print("usage: GuideExamples first|save")
    exit(64)
}
