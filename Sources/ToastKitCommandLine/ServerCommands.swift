import DBus
import ToastKit

/// `toastkit capabilities` and `toastkit server-info`: what the notification server says about itself.
enum ServerCommands {
    static func capabilities(json: Bool) async throws(CommandFailure) -> ExitCode {
        let names = try await BusAccess.withClient { client in try await client.capabilities() }
        if json {
            Output.json(["capabilities": .array(names.map(JSONValue.string))])
        } else {
            for name in names { Output.line(name) }
        }
        return .success
    }

    static func serverInfo(json: Bool) async throws(CommandFailure) -> ExitCode {
        let (information, owner) = try await BusAccess.withClient { client in
            (
                try await client.serverInformation(),
                try await client.connection.nameOwner(of: NotificationsClient.busName)
            )
        }
        if json {
            Output.json([
                "name": .string(information.name), "vendor": .string(information.vendor),
                "version": .string(information.version),
                "spec_version": .string(information.specificationVersion), "bus_name": .optional(owner),
            ])
        } else {
            Output.line("name: \(information.name)")
            Output.line("vendor: \(information.vendor)")
            Output.line("version: \(information.version)")
            Output.line("spec_version: \(information.specificationVersion)")
            if let owner { Output.line("bus_name: \(owner)") }
        }
        return .success
    }
}
