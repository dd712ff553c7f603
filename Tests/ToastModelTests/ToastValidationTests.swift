import Testing
import ToastModel

@Suite("Bad input is an error, never a trap")
struct ToastValidationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var message: ToastMessage
        var field: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "empty title, no message", message: ToastMessage(title: ""), field: "title"),
        Case(name: "empty title, empty message", message: ToastMessage(title: "", message: ""), field: "title"),
        Case(name: "negative duration", message: ToastMessage(title: "t", duration: -1), field: "duration"),
        Case(name: "NaN duration", message: ToastMessage(title: "t", duration: .seconds(.nan)), field: "duration"),
        Case(
            name: "infinite duration", message: ToastMessage(title: "t", duration: .seconds(.infinity)),
            field: "duration"),
        Case(name: "huge duration", message: ToastMessage(title: "t", duration: .seconds(1e300)), field: "duration"),
        Case(
            name: "two actions with one id",
            message: ToastMessage(
                title: "t", tapAction: ToastAction(id: "a", title: "A"),
                swipeActions: ToastSwipeActions(leading: ToastAction(id: "a", title: "Other"))),
            field: "actions"),
        Case(
            name: "swipe action using the reserved tap key",
            message: ToastMessage(
                title: "t", swipeActions: ToastSwipeActions(leading: ToastAction(id: "default", title: "D"))),
            field: "actions.leading.id"),
        Case(
            name: "action with an empty title",
            message: ToastMessage(title: "t", tapAction: ToastAction(id: "x", title: "")),
            field: "actions.tap.title"),
        Case(
            name: "image byte count does not match its size",
            message: ToastMessage(
                title: "t", icon: .image(width: 2, height: 2, rgba: [UInt8](repeating: 0, count: 15))),
            field: "icon"),
        Case(
            name: "image with negative size",
            message: ToastMessage(title: "t", icon: .image(width: -1, height: 2, rgba: [])), field: "icon"),
        Case(
            name: "image size overflowing Int",
            message: ToastMessage(title: "t", icon: .image(width: Int.max, height: 2, rgba: [])), field: "icon"),
        Case(name: "NUL in the title", message: ToastMessage(title: "a\u{0}b"), field: "title"),
        Case(name: "empty id", message: ToastMessage(id: "", title: "t"), field: "id"),
    ]

    @Test("validate() names the field", arguments: cases)
    func validateNamesField(testCase: Case) {
        #expect {
            try testCase.message.validate()
        } throws: { error in
            (error as? ToastValidationError)?.field == testCase.field
        }
    }

    @Test("present reports .failed(.invalid) as the one terminal event and shows nothing", arguments: cases)
    func presentReportsFailure(testCase: Case) throws {
        let h = Harness()
        let id = h.center.present(testCase.message)
        #expect(h.presenter.commands.isEmpty)
        let terminal = try #require(h.log.terminal.first)
        guard case .ended(id, .failed(.invalid(let error))) = terminal else {
            Issue.record("unexpected \(terminal)")
            return
        }
        #expect(error.field == testCase.field)
        #expect(h.log.events.count == 1)
    }

    @Test("valid edge cases are accepted")
    func validEdges() throws {
        try ToastMessage(title: "", message: "only a message").validate()
        try ToastMessage(title: "t", duration: 0).validate()
        try ToastMessage(title: "t", icon: .image(width: 2, height: 1, rgba: [UInt8](repeating: 255, count: 8)))
            .validate()
        try ToastMessage(title: "t", swipeActions: ToastSwipeActions(leading: .later, trailing: .dismiss)).validate()
    }

    @Test("an empty icon name, path or image is no icon: the toast is shown (a cosmetic problem never costs it)")
    func emptyIconIsNoIcon() throws {
        let h = Harness()
        let empty = ToastIcon.image(width: 0, height: 0, rgba: [])
        for (id, icon) in [("A", ToastIcon.system("")), ("B", .file("")), ("C", empty)] {
            let message = ToastMessage(id: id, title: "Now Playing", message: "Portishead - Roads", icon: icon)
            try message.validate()
            h.center.present(message)
        }
        #expect(h.presenter.commands.count == 1, "A shows; B and C wait behind it")
        #expect(h.presenter.onScreen.first?.request.summary == "Now Playing")
        #expect(h.log.terminal.isEmpty, "\(h.log.events)")
    }

    @Test("a bad default duration is reported when an .automatic toast is presented")
    func badDefaultDuration() {
        let h = Harness(defaultDuration: -3)
        h.center.present(ToastMessage(id: "A", title: "t"))
        guard case .ended("A", .failed(.invalid(let error))) = h.log.terminal.first else {
            Issue.record("expected a failure, got \(h.log.events)")
            return
        }
        #expect(error.field == "defaultDuration")
        h.center.present(ToastMessage(id: "B", title: "t", duration: 1))
        #expect(h.presenter.commandSummaries == ["show B"])
    }

    @Test("an invalid re-present leaves the live toast alone")
    func invalidReplace() {
        let h = Harness()
        h.center.present(ToastMessage(id: "A", title: "ok"))
        h.center.present(ToastMessage(id: "A", title: ""))
        #expect(h.center.liveToastIDs == ["A"])
        #expect(h.presenter.commandSummaries == ["show A"])
    }
}

@Suite("ToastDuration")
struct ToastDurationTests {
    @Test("number literals are seconds")
    func literals() {
        let six: ToastDuration = 6
        let half: ToastDuration = 0.5
        #expect(six == .seconds(6))
        #expect(half == .seconds(0.5))
    }

    @Test(
        "resolution",
        arguments: [
            (ToastDuration.automatic, ToastDuration.seconds(6), Duration?.some(.seconds(6))),
            (.automatic, .automatic, .seconds(4)),
            (.automatic, .indefinite, nil),
            (.indefinite, .seconds(6), nil),
            (.seconds(2), .seconds(6), .seconds(2)),
        ])
    func resolution(duration: ToastDuration, defaultDuration: ToastDuration, expected: Duration?) throws {
        #expect(try duration.resolved(default: defaultDuration) == expected)
    }
}
