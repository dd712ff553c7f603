import DBus
import ToastKit
import ToastKitAgent

/// `toastkit capabilities` and `toastkit server-info`: what the notification server (or, with the portal backend,
/// the notification portal) says about itself, asked in one round trip on the calling thread. Both say which backend
/// is in use, and why.
enum ServerCommands {
    static func capabilities(json: Bool, backend: BackendChoice) throws(CommandFailure) -> ExitCode {
        let names: [String]
        if backend.backend == .portal {
            names = portalCapabilities(version: try portalInfo(backend).version)
        } else {
            names = try BusAccess.withSender { $0.capabilities.capabilities.sorted() }
        }
        if json {
            Output.json([
                "capabilities": .array(names.map(JSONValue.string)), "backend": .string(backend.backend.rawValue),
                "backend_reason": .string(backend.reason),
            ])
        } else {
            for name in names { Output.line(TerminalText.escape(name)) }
            Output.line("backend: \(backend)")
        }
        return .success
    }

    static func serverInfo(json: Bool, backend: BackendChoice) throws(CommandFailure) -> ExitCode {
        if backend.backend == .portal {
            let (version, owner) = try portalInfo(backend)
            if json {
                Output.json([
                    "name": .string(NotificationPortalClient.busName.rawValue),
                    "interface": .string(NotificationPortalClient.interface.rawValue),
                    "version": .integer(Int64(version)), "bus_name": .string(owner),
                    "backend": .string(backend.backend.rawValue), "backend_reason": .string(backend.reason),
                ])
            } else {
                Output.line("name: \(NotificationPortalClient.busName.rawValue)")
                Output.line("interface: \(NotificationPortalClient.interface.rawValue)")
                Output.line("version: \(version)")
                Output.line("bus_name: \(owner)")
                Output.line("backend: \(backend)")
            }
            return .success
        }
        let (information, owner) = try BusAccess.withSender { ($0.capabilities.information, $0.server) }
        guard let information else {
            throw .unavailable("the notification server did not answer GetServerInformation properly")
        }
        if json {
            Output.json([
                "name": .string(information.name), "vendor": .string(information.vendor),
                "version": .string(information.version),
                "spec_version": .string(information.specificationVersion), "bus_name": .string(owner),
                "backend": .string(backend.backend.rawValue), "backend_reason": .string(backend.reason),
            ])
        } else {
            Output.line("name: \(TerminalText.escape(information.name))")
            Output.line("vendor: \(TerminalText.escape(information.vendor))")
            Output.line("version: \(TerminalText.escape(information.version))")
            Output.line("spec_version: \(TerminalText.escape(information.specificationVersion))")
            Output.line("bus_name: \(TerminalText.escape(owner))")
            Output.line("backend: \(backend)")
        }
        return .success
    }

    /// What ToastKit sends through a portal of `version`, in the notification server's capability words.
    static func portalCapabilities(version: UInt32) -> [String] {
        version >= 2 ? ["actions", "body", "body-markup", "icon-static", "sound"] : ["actions", "body", "icon-static"]
    }

    /// The notification interface's version and the portal's unique name, in one round trip.
    static func portalInfo(_ backend: BackendChoice) throws(CommandFailure) -> (version: UInt32, owner: String) {
        let timeout = Duration.seconds(10)
        let replies: [Result<DBusMessage, DBusError>]
        do {
            (_, replies) = try BlockingDBusConnection.connect(
                to: .session, timeout: timeout,
                calling: [
                    .bus("GetNameOwner", [.string(NotificationPortalClient.busName.rawValue)]),
                    NotificationPortalClient.readVersion,
                ])
        } catch {
            throw .unavailable("cannot reach the session bus: \(error.reason)")
        }
        do throws(DBusError) {
            let owner = try replies[0].get().arguments("s")[0].stringValue ?? ""
            return (try NotificationPortalClient.version(from: try replies[1].get()), owner)
        } catch {
            throw BusAccess.failure(
                .portal(
                    error, timeout: timeout, choice: backend.reason,
                    readingVersion: error.name != DBusError.Name.serviceUnknown
                        && error.name != DBusError.Name.nameHasNoOwner))
        }
    }
}
