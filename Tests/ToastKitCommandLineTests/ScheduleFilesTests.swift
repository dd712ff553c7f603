// The user's schedules as files of their own (issue 39), through the tool's processes with no agent running: one file
// that cannot be trusted costs `toastkit list` one line and no other schedule, and of many `close --id` of one schedule
// at once, one only finds it (the lock is the processes', as an agent's claim is).
import Foundation
import Glibc
import TestSupport
import Testing
import ToastKitAgent

@Suite(.timeLimit(.minutes(2))) struct ScheduleFilesTests {
    private func entry(_ id: String) -> ScheduleStore.Entry {
        var options = SendOptions(title: "Recordatorio \(id)")
        options.id = id
        return ScheduleStore.Entry(id: id, due: AgentStore.now() + 3600, request: AgentRequest(options: options))
    }

    /// The ids `toastkit list --json` lists as scheduled.
    private func scheduled(_ output: String) -> [String] {
        events(output).filter { $0["state"] as? String == "scheduled" }.compactMap { $0["id"] as? String }
    }

    @Test func aBadOrLargeScheduleFileCostsOneLineAndNoOtherSchedule() async throws {
        let session = try await BusOnlyEnvironment()
        defer { session.stop() }
        let store = try ScheduleStore.open(environment: session.environment)
        for id in ["a", "b", "c"] { try store.put(entry(id)) }
        try Data("{\"format\":\"toastkit-scheduled\",\"vers".utf8)
            .write(to: URL(fileURLWithPath: "\(store.folder)/torn.json"))
        let big = "\(store.folder)/big.json"
        #expect(FileManager.default.createFile(atPath: big, contents: nil))
        #expect(truncate(big, off_t(ScheduleStore.maximumSize) + 1) == 0)

        let list = try await toastkit(["list", "--json"], environment: session.environment)
        #expect(list.status == 0, "\(list.error)")
        #expect(scheduled(list.output) == ["a", "b", "c"], "\(list.output)")
        let lines = list.error.split(separator: "\n")
        #expect(lines.count == 2, "one line each:\n\(list.error)")
        for name in ["torn.json", "big.json"] {
            #expect(
                lines.filter { $0.contains("/scheduled/\(name) is not read") && $0.contains("\(name).refused") }.count
                    == 1, "\(name):\n\(list.error)")
        }
        let again = try await toastkit(["list", "--json"], environment: session.environment)
        #expect(again.error.isEmpty && scheduled(again.output) == ["a", "b", "c"], "\(again.error)")
    }

    @Test func ofManyCancelsOfOneScheduleAtOnceOneOnlyFindsIt() async throws {
        let session = try await BusOnlyEnvironment()
        defer { session.stop() }
        let store = try ScheduleStore.open(environment: session.environment)
        try store.put(entry("cita"))
        try store.put(entry("otra"))
        let closers = try (0..<8).map { _ in
            try ToolProcess.start(["close", "--id", "cita"].map { Array($0.utf8) }, environment: session.environment)
        }
        var results: [ToolProcess.Result] = []
        for closer in closers { results.append(await closer.finish()) }
        #expect(results.filter { $0.status == 0 }.count == 1, "\(results.map { "\($0.status): \($0.error)" })")
        for result in results where result.status != 0 {
            #expect(result.error.contains("no toast with this id is known"), "\(result.error)")
        }
        #expect(store.load().map(\.id) == ["otra"])
    }
}
