import Foundation
import TestSupport
import Testing
import ToastKitAgent

@testable import ToastKitCommandLine

/// The exit codes the tool uses are the ones the README's table, the man page and `--help` document.
@Suite struct DocumentationTests {
    private func read(_ path: String) throws -> String {
        try String(contentsOfFile: "\(NotificationEnvironment.repositoryRoot)/\(path)", encoding: .utf8)
    }

    /// The `VERSION` file is the one place the version is set; the code's copy and the man page's header follow it.
    @Test func theVersionIsTheVersionFile() throws {
        let version = try read("VERSION").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(ToolVersion.current == version, "Sources/ToastKitAgent/Version.swift says what VERSION says")
        let header = try read("docs/toastkit.1").split(separator: "\n").first { $0.hasPrefix(".TH ") } ?? ""
        #expect(header.contains("\"toastkit \(version)\""), "docs/toastkit.1's .TH line names toastkit \(version)")
        // The README's install commands name the files scripts/package.sh makes.
        let readme = try read("README.md")
        let names = try Regex(#"toastkit(-notify-send)?_[0-9.]+_(amd64|all)\.deb|toastkit-[0-9.]+-x86_64-linux"#)
        let named = readme.matches(of: names).map { String(readme[$0.range]) }
        #expect(!named.isEmpty, "the README's Install section names the packages")
        for name in named {
            let isVersions = name.contains("_\(version)_") || name.contains("-\(version)-")
            #expect(isVersions, "README: \(name) is not version \(version)'s")
        }
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

    /// Each command's options, as the parser takes them.
    private static let options: [(Command, [OptionSpec])] = [
        (.send, Specs.send), (.close, Specs.close), (.later, Specs.later), (.capabilities, Specs.jsonOnly),
        (.serverInfo, Specs.jsonOnly), (.listen, Specs.jsonOnly), (.wait, Specs.wait), (.list, Specs.jsonOnly),
        (.doctor, Specs.jsonOnly),
        (.agent, Specs.agent), (.run, Specs.run), (.progress, Specs.send), (.notifySend, Dialects.notifySend),
        (.dunstify, Dialects.dunstify + Dialects.dunstifyCommands),
    ]

    @Test func theManPageAndEveryCompletionKnowEveryCommandAndOption() throws {
        #expect(Set(Self.options.map(\.0)) == Set(Command.allCases), "every command has its options here")
        let page = try read("docs/toastkit.1").replacingOccurrences(of: "\\-", with: "-")
        let bash = try read("scripts/completions/toastkit.bash")
        let zsh = try read("scripts/completions/_toastkit")
        let fish = try read("scripts/completions/toastkit.fish")
        let bashCommands = try #require(
            bash.split(separator: "\n").first { $0.contains("local commands=") }?.split(separator: "\"").dropFirst()
                .first
        ).split(separator: " ").map(String.init)
        for (command, specs) in Self.options {
            let name = command.rawValue
            #expect(page.contains(".B toastkit \(name)\n"), "the man page's synopsis has \(name)")
            #expect(bashCommands.contains(name), "bash completes \(name)")
            #expect(zsh.contains("'\(name):"), "zsh completes \(name)")
            #expect(fish.contains("-a \(name) "), "fish completes \(name)")
            for spec in specs {
                let long = "--\(spec.long)"
                #expect(page.contains(long), "the man page documents \(name) \(long)")
                // An option toastkit gives itself is documented, never offered.
                guard !spec.isInternal else {
                    #expect(!bash.contains(long) && !zsh.contains(long) && !fish.contains("-l \(spec.long)"))
                    continue
                }
                #expect(bash.contains(long), "bash completes \(name) \(long)")
                #expect(zsh.contains(long), "zsh completes \(name) \(long)")
                #expect(fish.contains("-l \(spec.long)"), "fish completes \(name) \(long)")
            }
        }
    }
}
