// How the session's display is read from an environment list (systemd's `Environment`, `/proc/PID/environ`), in
// process.
import Testing
import ToastKitAgent

@Suite struct SessionDisplayTests {
    @Test func entriesAreNameEqualsValueAndTheFirstOfANameWins() {
        let entries: [Substring] = ["DISPLAY=:1", "junk", "=nameless", "DISPLAY=:2", "A=b=c", "EMPTY="]
        #expect(SessionDisplay.environment(ofEntries: entries) == ["DISPLAY": ":1", "A": "b=c", "EMPTY": ""])
    }

    @Test func onlyTheDisplayVariablesAreTakenAndOnlyWhenOneNamesADisplay() {
        #expect(
            SessionDisplay.variables(of: ["DISPLAY": ":0", "XAUTHORITY": "/a", "HOME": "/h", "WAYLAND_DISPLAY": ""])
                == ["DISPLAY": ":0", "XAUTHORITY": "/a"])
        #expect(SessionDisplay.variables(of: ["WAYLAND_DISPLAY": "wayland-0"]) == ["WAYLAND_DISPLAY": "wayland-0"])
        #expect(SessionDisplay.variables(of: ["DISPLAY": "", "XAUTHORITY": "/a"]) == nil)
        #expect(SessionDisplay.variables(of: [:]) == nil)
    }
}
