import Testing
import ToastKitTesting
import ToastModel

@Suite("M8 theme and style")
struct ToastStyleTests {
    static let toast = PresentedToast(
        id: "A", status: .warning, title: "Poco espacio", message: "Libera espacio",
        actions: [PresentedAction(key: "default", actionID: "open", title: "Abrir", role: .tap)],
        remaining: .seconds(4), isTimerRunning: true)

    @Test(
        "the standard theme maps each status to an icon name and urgency",
        arguments: [
            (ToastStatus.normal, "dialog-information", ToastUrgency.normal),
            (.success, "emblem-default", .normal),
            (.warning, "dialog-warning", .normal),
            (.error, "dialog-error", .critical),
            (.notification, "preferences-system-notifications", .normal),
        ])
    func standardTheme(status: ToastStatus, icon: String, urgency: ToastUrgency) {
        var toast = Self.toast
        toast.status = status
        let request = ThemedToastStyle(theme: .standard).makeRequest(for: toast)
        #expect(request.icon == .system(icon))
        #expect(request.urgency == urgency)
        #expect(request.summary == "Poco espacio")
        #expect(request.body == "Libera espacio")
        #expect(request.actions == [ToastRequest.Action(key: "default", label: "Abrir")])
    }

    @Test("the toast's own icon wins over the theme's")
    func ownIcon() {
        var toast = Self.toast
        toast.icon = .system("photo.on.rectangle")
        #expect(ThemedToastStyle(theme: .standard).makeRequest(for: toast).icon == .system("photo.on.rectangle"))
    }

    @Test("per-status overrides: icon, urgency, category, sound")
    func overrides() {
        var theme = ToastTheme.standard
        theme[.warning] = ToastStatusDecoration(
            iconName: "drive-harddisk", urgency: .critical, category: "device", soundName: "dialog-warning")
        let request = ThemedToastStyle(theme: theme).makeRequest(for: Self.toast)
        #expect(request.icon == .system("drive-harddisk"))
        #expect(request.urgency == .critical)
        #expect(request.category == "device")
        #expect(request.soundName == "dialog-warning")
    }

    @Test(".plain sends no status decoration")
    func plain() {
        let request = PlainToastStyle().makeRequest(for: Self.toast)
        #expect(request.icon == nil)
        #expect(request.urgency == .normal)
        #expect(request.category == nil)
    }

    struct HintingStyle: ToastStyle {
        func makeRequest(for toast: PresentedToast) -> ToastRequest {
            var request = ThemedToastStyle(theme: .standard).makeRequest(for: toast)
            request.hints["x-app-id"] = .string("demo")
            request.hints["resident"] = .bool(true)
            request.summary = request.summary.uppercased()
            return request
        }
    }

    @Test("the center applies its style; a custom style rewrites the request, hints included")
    func centerStyle() {
        let h = Harness()
        h.center.present(ToastMessage(id: "A", status: .error, title: "a"))
        #expect(h.presenter.presentation(of: "A")?.request.icon == .system("dialog-error"))
        h.center.toastStyle(.plain)
        h.center.present(ToastMessage(id: "A", status: .error, title: "a"))
        #expect(h.presenter.presentation(of: "A")?.request.icon == nil)
        h.center.toastStyle(HintingStyle())
        h.center.present(ToastMessage(id: "A", status: .error, title: "a"))
        let request = h.presenter.presentation(of: "A")?.request
        #expect(request?.summary == "A")
        #expect(request?.hints == ["x-app-id": .string("demo"), "resident": .bool(true)])
        h.center.toastTheme(ToastTheme(tint: { _ in .pink }, cornerRadius: 16))
        #expect(h.center.style is ThemedToastStyle)
    }

    @Test("standardTint gives each status a color")
    func tints() {
        #expect(Set(ToastStatus.allCases.map(ToastTheme.standardTint)).count == ToastStatus.allCases.count)
    }
}
