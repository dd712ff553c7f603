import Foundation
import Testing
import ToastKitTesting
import ToastModel

/// A toast's sound in the model (issue 21 §2): its text form (the command line's and JSON's), the message's field, and
/// what the styles put in the request.
@Suite struct ToastSoundTests {
    @Test func theTextFormNamesAThemeSoundAFileOrSilence() {
        #expect(ToastSound(text: "message-new-instant") == .named("message-new-instant"))
        #expect(ToastSound(text: "default") == .default && ToastSound.default == .named("message-new-instant"))
        #expect(ToastSound(text: "silent") == .silent)
        #expect(ToastSound(text: "/usr/share/sounds/a.oga") == .file("/usr/share/sounds/a.oga"))
        #expect(ToastSound(text: "sounds/a.oga") == nil, "relative: the caller makes it absolute")
        #expect(ToastSound(text: "") == nil)
        for sound in [ToastSound.named("bell"), .file("/a b.wav"), .silent] {
            #expect(ToastSound(text: sound.text) == sound)
        }
    }

    @Test func aMessagesSoundGoesThroughJSON() throws {
        let message = ToastMessage(id: "A", title: "Listo", sound: .file("/tmp/ding.wav"))
        let data = try JSONEncoder().encode(message)
        #expect(String(decoding: data, as: UTF8.self).contains(#""sound":"\/tmp\/ding.wav""#))
        #expect(try JSONDecoder().decode(ToastMessage.self, from: data) == message)
        let named = try JSONDecoder().decode(ToastMessage.self, from: Data(#"{"title":"x","sound":"complete"}"#.utf8))
        #expect(named.sound == .named("complete"))
        #expect(try JSONDecoder().decode(ToastMessage.self, from: Data(#"{"title":"x"}"#.utf8)).sound == nil)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ToastMessage.self, from: Data(#"{"title":"x","sound":"a/b"}"#.utf8))
        }
    }

    /// The toast's own sound wins over the theme's for its status; the plain style carries only the toast's own.
    @Test func theToastsOwnSoundWinsOverTheThemes() {
        var theme = ToastTheme.standard
        theme[.error] = ToastStatusDecoration(iconName: "dialog-error", urgency: .critical, soundName: "dialog-error")
        let style = ThemedToastStyle(theme: theme)
        let plain = PresentedToast(id: "a", status: .error, title: "Falló")
        #expect(style.makeRequest(for: plain).sound == .named("dialog-error"))
        #expect(style.makeRequest(for: plain).soundName == "dialog-error")
        var own = plain
        own.sound = .silent
        #expect(style.makeRequest(for: own).sound == .silent)
        #expect(style.makeRequest(for: own).soundName == nil)
        #expect(PlainToastStyle().makeRequest(for: plain).sound == nil)
        #expect(PlainToastStyle().makeRequest(for: own).sound == .silent)
    }

    /// The stack hands the message's sound to the presenter with every snapshot (the presenter plays it once).
    @Test func theSnapshotCarriesTheMessagesSound() {
        var stack = ToastStack()
        _ = stack.attachPresenter(now: .zero)
        let shown = stack.present(ToastMessage(id: "a", title: "Listo", sound: .named("complete")), now: .zero)
        let toast = shown.compactMap { if case .show(let toast) = $0 { toast } else { nil } }.first
        #expect(toast?.sound == .named("complete"))
    }

    /// A toast shown again (the server restarted, so the presenter asks for everything again) comes with
    /// `soundHasPlayed`, so its sound plays once; an update with the same sound says so too, one with another sound
    /// does not. A covered toast never leaves the presenter, so coming back to the front shows nothing again.
    @Test func aToastShownAgainSaysItsSoundHasPlayed() {
        func shown(_ outputs: [ToastStack.Output], _ id: String) -> PresentedToast? {
            outputs.lazy.compactMap { output -> PresentedToast? in
                switch output {
                case .show(let toast) where toast.id == id, .update(let toast) where toast.id == id: toast
                default: nil
                }
            }.first
        }
        var stack = ToastStack()
        _ = stack.attachPresenter(now: .zero)
        let first = shown(stack.present(ToastMessage(id: "a", title: "Copia", sound: .named("bell")), now: .zero), "a")
        #expect(first?.soundHasPlayed == false, "first shown")
        // B covers A: A stays on the presenter, stopped, and is not shown again when B goes.
        let covering = stack.present(ToastMessage(id: "b", title: "Otra", duration: .indefinite), now: .seconds(1))
        #expect(shown(covering, "a") == nil && !covering.contains { if case .close = $0 { true } else { false } })
        #expect(shown(stack.dismiss(id: "b", now: .seconds(2)), "a") == nil)
        let back = shown(stack.handle(.reshowRequested, now: .seconds(2)), "a")
        #expect(back?.soundHasPlayed == true, "shown again after a restart")
        let same = shown(
            stack.present(ToastMessage(id: "a", title: "Copia 2", sound: .named("bell")), now: .seconds(3)), "a")
        #expect(same?.soundHasPlayed == true, "an update with the same sound")
        let other = shown(
            stack.present(ToastMessage(id: "a", title: "Hecho", sound: .named("complete")), now: .seconds(4)), "a")
        #expect(other?.soundHasPlayed == false, "an update with another sound")
    }
}
