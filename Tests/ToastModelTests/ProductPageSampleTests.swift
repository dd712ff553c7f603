import Testing
import ToastKitTesting
import ToastModel

// The product page's code samples, compiled against the model. Only the SwiftUI parts are adapted: `ToastCenter()`
// (added by the ToastKit module with the desktop presenter) becomes a center with a recording presenter, and
// `.toasts(toasts)` becomes attaching that presenter.

private final class Store: Sendable {
    let archived = Trace()
    func archive(_ id: String) { archived.append(id) }
}

private final class Router: Sendable {
    let opened = Trace()
    func open(_ id: String) { opened.append(id) }
}

@Suite("Product page samples")
struct ProductPageSampleTests {
    @Test("quick form, full message, durations, replace, actions, theme and style")
    func samples() {
        let presenter = RecordingPresenter()
        let toasts = ToastCenter(presenter: nil, clock: ManualClock(), laterStore: nil)
        toasts.attach(presenter)  // .toasts(toasts)

        toasts.present(.normal, title: "Cambios guardados")

        toasts.present(
            .warning,
            title: "Poco espacio",
            message: "Libera espacio para continuar la sincronización."
        )

        let message = ToastMessage(
            status: .notification,
            title: "Fotos nuevas",
            message: "12 fotos de hoy",
            icon: .system("photo.on.rectangle"),
            duration: 6
        )
        toasts.present(message)

        // Se muestra dos segundos
        _ = ToastMessage(title: "Copiado", duration: 2)
        // Permanece hasta que se cierre
        _ = ToastMessage(title: "Error al sincronizar", duration: .indefinite)
        let six = ToastCenter(defaultDuration: 6, presenter: nil, clock: ManualClock(), laterStore: nil)
        #expect(six.defaultDuration == 6)

        let store = Store()
        let router = Router()
        let archive = ToastAction(
            id: "archive",
            title: "Archivar",
            icon: .system("archivebox"),
            confirmation: "Archivado"
        ) { toast in
            store.archive(toast.id)
        }

        toasts.present(
            ToastMessage(
                title: "Mensaje de Ana",
                tapAction: ToastAction(title: "Abrir") { toast in
                    router.open(toast.id)
                },
                swipeActions: ToastSwipeActions(leading: archive, trailing: .later)
            ))

        toasts.toastTheme(
            ToastTheme(
                titleFont: .headline,
                tint: { status in
                    status == .notification ? .pink : ToastTheme.standardTint(status)
                },
                cornerRadius: 16
            ))
        toasts.toastStyle(.plain)

        #expect(toasts.liveToastIDs.count == 4)
        #expect(presenter.summaries.count == 1)
        toasts.dismissAll()
    }
}
