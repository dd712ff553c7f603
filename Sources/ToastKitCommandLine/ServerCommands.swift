import ToastKit

/// `toastkit capabilities` and `toastkit server-info`: what the notification server says about itself (asked in one
/// round trip, on the calling thread).
enum ServerCommands {
    static func capabilities(json: Bool) throws(CommandFailure) -> ExitCode {
        let names = try BusAccess.withSender { $0.capabilities.capabilities.sorted() }
        if json {
            Output.json(["capabilities": .array(names.map(JSONValue.string))])
        } else {
            for name in names { Output.line(TerminalText.escape(name)) }
        }
        return .success
    }

    static func serverInfo(json: Bool) throws(CommandFailure) -> ExitCode {
        let (information, owner) = try BusAccess.withSender { ($0.capabilities.information, $0.server) }
        guard let information else {
            throw .unavailable("the notification server did not answer GetServerInformation properly")
        }
        if json {
            Output.json([
                "name": .string(information.name), "vendor": .string(information.vendor),
                "version": .string(information.version),
                "spec_version": .string(information.specificationVersion), "bus_name": .string(owner),
            ])
        } else {
            Output.line("name: \(TerminalText.escape(information.name))")
            Output.line("vendor: \(TerminalText.escape(information.vendor))")
            Output.line("version: \(TerminalText.escape(information.version))")
            Output.line("spec_version: \(TerminalText.escape(information.specificationVersion))")
            Output.line("bus_name: \(TerminalText.escape(owner))")
        }
        return .success
    }
}
