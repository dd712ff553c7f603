import Synchronization
import Testing
import ToastKit
import ToastKitTesting

// The product page's samples with nothing but `import ToastKit` (ToastKitTesting only supplies the recording
// presenter that stands in for the desktop, so the test never pops toasts on a developer's screen).

private final class Store: Sendable {
    let archived = Mutex<[String]>([])
    func archive(_ id: String) { archived.withLock { $0.append(id) } }
}

private final class Router: Sendable {
    let opened = Mutex<[String]>([])
    func open(_ id: String) { opened.withLock { $0.append(id) } }
}

@Suite struct ProductPageTests {
    @Test func theDesktopCenterIsTheDefault() {
        let toasts = ToastCenter()
        #expect(toasts.presenter is DesktopNotificationPresenter)
        #expect(toasts.defaultDuration == 4)
        let six = ToastCenter(defaultDuration: 6)
        #expect(six.defaultDuration == 6)
        let fotos = ToastCenter(desktop: PresenterConfiguration(appName: "Fotos", desktopEntry: "fotos"))
        #expect((fotos.presenter as? DesktopNotificationPresenter)?.configuration.appName == "Fotos")
    }

    @Test func thePortalIsChosenInASandboxOrWhenAskedFor() {
        // This test process is not sandboxed: the automatic choice is the notification server.
        #expect(NotificationBackend.automatic.choice().backend == .notifications)
        let portal = ToastCenter(desktop: PresenterConfiguration(appName: "Fotos", backend: .portal))
        #expect(portal.presenter is PortalNotificationPresenter)
        let server = ToastCenter(desktop: PresenterConfiguration(backend: .notifications))
        #expect(server.presenter is DesktopNotificationPresenter)
    }

    @Test func samplesCompileAndRun() {
        let toasts = ToastCenter()
        let recording = RecordingPresenter()
        toasts.attach(recording)  // `.toasts(toasts)`: the recording presenter stands in for the desktop

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
        _ = ToastMessage(title: "Copiado", duration: 2)
        _ = ToastMessage(title: "Error al sincronizar", duration: .indefinite)

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

        // Three on screen at once, stacked, the newest in front; Ana's message asks something (a tap, buttons), so it
        // does not wait for a room: it is shown at once, in front, the only one whose time runs.
        #expect(
            recording.onScreen.map(\.toast.title) == [
                "Cambios guardados", "Poco espacio", "Fotos nuevas", "Mensaje de Ana",
            ])
        #expect(recording.onScreen.filter(\.toast.isTimerRunning).map(\.toast.title) == ["Mensaje de Ana"])
        #expect(toasts.liveToastIDs.count == 4)
        toasts.dismissAll()
    }
}
