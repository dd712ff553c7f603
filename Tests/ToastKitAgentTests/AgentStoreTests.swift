import Foundation
import Glibc
import TestSupport
import Testing
import ToastModel

@testable import ToastKitAgent

/// The agent's journal read back (``AgentStore/decode(_:busID:now:)``), without a bus: records replayed in order, a
/// torn last line ignored, anything an agent could not have written refused; and a request's traits for the lane
/// rule (the rule itself: `AgentMachineTests`).
@Suite struct AgentStoreTests {
    static let bus = "0123456789abcdef0123456789abcdef"
    static let now = 1_800_000_000.0

    static func toast(_ id: String, remaining: Double? = 5) -> AgentStore.Saved {
        AgentStore.Saved(
            request: AgentRequest(options: SendOptions(title: "T \(id)")), id: id, serverID: nil, remaining: remaining,
            running: false)
    }

    static func journal(_ records: [AgentStore.Record], bus: String = bus, torn: String? = nil) throws -> [UInt8] {
        let encoder = JSONEncoder()
        var text = #"{"bus_id":"\#(bus)","format":"toastkit-agent-journal","version":2}"# + "\n"
        for record in records { text += String(decoding: try encoder.encode(record), as: UTF8.self) + "\n" }
        if let torn { text += torn }
        return Array(text.utf8)
    }

    /// The disk form of a request keeps every field `send` can give, under keys of its own.
    @Test func aRequestSurvivesItsDiskForm() throws {
        var options = SendOptions(title: "Título")
        options.message = .text("Cuerpo")
        options.status = .warning
        options.icon = .path("/tmp/i.png")
        options.duration = .duration(.seconds(2.5))
        options.actions = [ActionOption(id: "a", label: "A", confirmation: "Hecho"), ActionOption(id: "later")]
        options.tap = ActionOption(id: "open")
        options.appName = "app"
        options.appIcon = "icon"
        options.urgency = .critical
        options.category = "im"
        options.hints = [
            Hint(name: "value", value: .int32(-5)), Hint(name: "y", value: .byte(7)),
            Hint(name: "b", value: .bool(true)),
            Hint(name: "u", value: .uint32(9)), Hint(name: "d", value: .double(0.5)),
            Hint(name: "s", value: .string("t")),
        ]
        options.transient = true
        options.replaceID = 42
        var request = AgentRequest(options: options, onAction: ["a": ["touch", "/tmp/x"]])
        request.awaitShown = true
        request.workingDirectory = "/tmp"
        request.environment = ["A": "1"]
        let text = String(decoding: try JSONEncoder().encode(SavedRequest(request)), as: UTF8.self)
        #expect(text.contains(#""on_action""#) && text.contains(#""icon_file""#) && !text.contains("printID"))
        #expect(try JSONDecoder().decode(SavedRequest.self, from: Data(text.utf8)).request() == request)
        var indefinite = AgentRequest(options: SendOptions(title: "x"))
        indefinite.options.duration = .duration(.indefinite)
        #expect(try SavedRequest(indefinite).request() == indefinite)
        // A reply action keeps its field (a scheduled or restored toast still asks for its text).
        var reply = AgentRequest(options: SendOptions(title: "Ana"))
        reply.options.duration = .duration(.indefinite)
        reply.options.actions = [
            ActionOption(id: "reply", label: "Responder", reply: ToastReplyField(placeholder: "Escribe…")),
            ActionOption(id: "plain", label: "Plain"),
        ]
        let saved = String(decoding: try JSONEncoder().encode(SavedRequest(reply)), as: UTF8.self)
        #expect(saved.contains(#""reply_placeholder":"Escribe…""#))
        #expect(try JSONDecoder().decode(SavedRequest.self, from: Data(saved.utf8)).request() == reply)
    }

    @Test func recordsAreReplayedInOrder() throws {
        let bytes = try Self.journal([
            .put(Self.toast("a"), at: Self.now - 10), .put(Self.toast("b"), at: Self.now - 9),
            .server("a", 7, at: Self.now - 9), .timer("a", remaining: 4, running: true, at: Self.now - 3),
            .end("b", at: Self.now - 2), .put(Self.toast("c", remaining: nil), at: Self.now - 1),
        ])
        let live = try AgentStore.decode(bytes, busID: Self.bus, now: Self.now)
        #expect(live.map(\.toast.id) == ["a", "c"])
        #expect(live[0].toast.serverID == 7 && live[0].toast.remaining == 4 && live[0].toast.running)
        #expect(live[0].age == 3, "the age of its timer's record")
        #expect(live[1].toast.remaining == nil && live[1].age == 1)
    }

    @Test func aTornLastLineIsIgnoredAndTheRestStands() throws {
        let bytes = try Self.journal([.put(Self.toast("a"), at: Self.now)], torn: #"{"at":1800000000,"op":"pu"#)
        #expect(try AgentStore.decode(bytes, busID: Self.bus, now: Self.now).map(\.toast.id) == ["a"])
    }

    /// The torn line is also cut off the file as it is read, so the next append starts a line of its own (glued onto
    /// the fragment, it would make the whole journal unreadable for the agent after).
    @Test func aTornLastLineIsCutOffTheFile() throws {
        let folder = try Tools.makeTemporaryDirectory(prefix: "toastkit-journal")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AgentStore.open(environment: ["XDG_RUNTIME_DIR": folder], busID: Self.bus)
        let now = Date().timeIntervalSince1970
        let bytes = try Self.journal([.put(Self.toast("a"), at: now)], torn: #"{"at":1800000000,"op":"pu"#)
        try Data(bytes).write(to: URL(fileURLWithPath: store.path))
        chmod(store.path, 0o600)
        #expect(store.load(now: now).map(\.toast.id) == ["a"])
        try store.append([.put(Self.toast("b"), at: now)])
        #expect(store.load(now: now).map(\.toast.id) == ["a", "b"])
        #expect(access(store.path + ".refused", F_OK) != 0)
    }

    @Test func whatNoAgentWroteIsRefused() throws {
        func refusal(_ bytes: [UInt8]) -> String {
            do {
                _ = try AgentStore.decode(bytes, busID: Self.bus, now: Self.now)
                return "adopted"
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal(try Self.journal([], bus: "ffff")).contains("belongs to bus ffff"))
        #expect(refusal(Array(#"{"version":1,"saved_at":1,"toasts":[]}"#.utf8)).contains("not a saved-toasts journal"))
        #expect(
            refusal(try Self.journal([.put(Self.toast("a"), at: -1e17)])).contains("not one this agent can believe"))
        #expect(
            refusal(try Self.journal([.put(Self.toast("a", remaining: -5), at: Self.now)])).contains("out of range"))
        #expect(refusal(try Self.journal([.end("", at: Self.now)])).contains("id is empty"))
        let noProgram = Array(
            (#"{"bus_id":"\#(Self.bus)","format":"toastkit-agent-journal","version":2}"# + "\n"
                + #"{"at":1800000000,"op":"put","toast":{"id":"a","running":false,"request":{"title":"T","#
                + #""actions":[{"id":"ok"}],"on_action":{"ok":[]}}}}"# + "\n").utf8)
        #expect(refusal(noProgram).contains(#"on_action "ok" without a program"#), "\(refusal(noProgram))")
        let bogus = Array(
            (#"{"bus_id":"\#(Self.bus)","format":"toastkit-agent-journal","version":2}"# + "\n"
                + #"{"at":1800000000,"op":"put","toast":{"id":"a","running":false,"request":{"title":"T","status":"x"}}}"#
                + "\n").utf8)
        #expect(refusal(bogus).contains(#"line 2: toast "a": status "x" is not valid"#), "\(refusal(bogus))")
        let middle =
            try Self.journal([.put(Self.toast("a"), at: Self.now)]) + Array("garbage\n".utf8)
            + Array(try Self.journal([.end("a", at: Self.now)]).split(separator: 0x0A)[1]) + [0x0A]
        #expect(refusal(middle).contains("line 3 is not a record"))
    }

    @Test func eachKindOfToastJoinsItsLane() {
        func lane(_ configure: (inout AgentRequest) -> Void) -> AgentLane {
            var request = AgentRequest(options: SendOptions(title: "T"))
            request.options.duration = .duration(.automatic)
            configure(&request)
            return AgentLane.of(request.traits, id: "x")
        }
        #expect(lane { _ in } == .application("toastkit"))
        #expect(lane { $0.options.duration = .serverDefault } == .own("x"), "a toast the server times holds no lane")
        #expect(lane { $0.options.duration = nil } == .own("x"), "no duration given: the server's")
        #expect(lane { $0.options.appName = "backup" } == .application("backup"))
        #expect(
            lane {
                $0.options.appName = "backup"
                $0.options.hints = [Hint(name: "desktop-entry", value: .string("org.example.Backup"))]
            } == .application("desktop-entry:org.example.Backup"))
        #expect(lane { $0.options.duration = .duration(.indefinite) } == .own("x"))
        #expect(
            lane {
                $0.options.duration = nil
                $0.options.actions = [ActionOption(id: "si", label: "Sí")]
            } == .own("x"))
        #expect(lane { $0.options.actions = [ActionOption(id: "si", label: "Sí")] } == .own("x"))
        #expect(lane { $0.options.tap = ActionOption(id: "open") } == .own("x"))
        #expect(lane { $0.awaitShown = true } == .own("x"))
        #expect(lane { $0.options.replaceID = 4242 } == .own("x"))
        #expect(lane { $0.options.duration = .duration(.seconds(3)) } == .application("toastkit"))
    }
}
