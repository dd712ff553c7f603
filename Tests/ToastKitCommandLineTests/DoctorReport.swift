// `toastkit doctor --json` as the doctor tests read it: the report's object and its findings on one topic.
import Foundation
import Testing

/// The report's JSON object.
func doctorReport(_ output: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
}

/// The report's findings on `topic` (`server`, `service files`, `do not disturb`, …).
func doctorFindings(_ report: [String: Any], topic: String) -> [[String: Any]] {
    ((report["findings"] as? [[String: Any]]) ?? []).filter { $0["topic"] as? String == topic }
}
