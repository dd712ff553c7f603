import Foundation
import TestSupport
import Testing

@testable import ToastKitCommandLine

/// The exit codes the tool uses are the ones the README's table, the man page and `--help` document.
@Suite struct DocumentationTests {
    private func read(_ path: String) throws -> String {
        try String(contentsOfFile: "\(NotificationEnvironment.repositoryRoot)/\(path)", encoding: .utf8)
    }

    @Test func theReadmesExitCodeTableMatchesTheTool() throws {
        let readme = try read("README.md")
        let table = try #require(readme.components(separatedBy: "### Exit codes").dropFirst().first)
        var codes: Set<Int32> = []
        for line in table.split(separator: "\n").prefix(while: { !$0.hasPrefix("Exit code 1") }) {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = cells.first else { continue }
            for number in first.split(separator: "/") {
                if let code = Int32(number.trimmingCharacters(in: .whitespaces)) { codes.insert(code) }
            }
        }
        #expect(codes == Set(ExitCode.allCases.map(\.rawValue)))
    }

    @Test func theManPageListsEveryExitCode() throws {
        let page = try read("docs/toastkit.1")
        let section =
            try #require(page.components(separatedBy: ".SH EXIT STATUS").dropFirst().first)
            .components(separatedBy: ".SH ").first ?? ""
        // `.B 0` … `.BR 130 ", " 143`: the codes are the numbers on the bold lines.
        let numbers = Set(
            section.split(separator: "\n").filter { $0.hasPrefix(".B") }.flatMap {
                $0.split(whereSeparator: { !$0.isNumber }).compactMap { Int32($0) }
            })
        for code in ExitCode.allCases {
            #expect(numbers.contains(code.rawValue), "exit code \(code.rawValue) is in the man page")
        }
    }
}
