import FoundationEssentials
import Glibc
public import ToastModel

/// Which D-Bus service shows the toasts: the desktop's notification server, or the notification portal that
/// sandboxed apps use.
///
/// ``automatic`` (the default) picks the portal when the process runs in a Flatpak or Snap sandbox and the
/// notification server otherwise: a sandbox normally cannot reach `org.freedesktop.Notifications`, and outside one the
/// server does more (timeouts, close reasons, markup, capabilities).
public enum NotificationBackend: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The portal inside a sandbox, the notification server outside one.
    case automatic = "auto"
    /// `org.freedesktop.Notifications` (``DesktopNotificationPresenter``).
    case notifications
    /// `org.freedesktop.portal.Notification` on `org.freedesktop.portal.Desktop` (``PortalNotificationPresenter``).
    case portal

    /// The name used on the command line (`auto`, `notifications`, `portal`).
    public var description: String { rawValue }

    /// What it is, in words, for messages: "the notification portal (org.freedesktop.portal.Notification)".
    public var displayName: String {
        switch self {
        case .automatic: "the automatic choice"
        case .notifications: "the notification server (org.freedesktop.Notifications)"
        case .portal: "the notification portal (org.freedesktop.portal.Notification)"
        }
    }

    /// The backend to use in `sandbox` (`nil`: not sandboxed): ``automatic`` becomes ``portal`` in a sandbox and
    /// ``notifications`` outside one; an explicit choice stays as it is.
    public func resolved(in sandbox: Sandbox?) -> NotificationBackend {
        guard self == .automatic else { return self }
        return sandbox == nil ? .notifications : .portal
    }

    /// The backend to use here and why, in words ("chosen automatically: /.flatpak-info exists").
    ///
    /// - Parameters:
    ///   - environment: The environment to look at (`nil`: this process's).
    ///   - fileExists: Whether a file exists (`nil`: look at the file system).
    public func choice(
        environment: [String: String]? = nil, fileExists: ((String) -> Bool)? = nil
    ) -> BackendChoice {
        let sandbox = Sandbox.detect(environment: environment, fileExists: fileExists)
        let backend = resolved(in: sandbox)
        let reason: String
        switch (self, sandbox) {
        case (.automatic, let sandbox?): reason = "chosen automatically: \(sandbox.evidence)"
        case (.automatic, nil): reason = "chosen automatically: not in a Flatpak or Snap sandbox"
        default: reason = "chosen explicitly"
        }
        return BackendChoice(backend: backend, reason: reason, sandbox: sandbox)
    }
}

/// A resolved ``NotificationBackend`` and why it was chosen.
public struct BackendChoice: Sendable, Hashable, CustomStringConvertible {
    /// ``NotificationBackend/notifications`` or ``NotificationBackend/portal`` (never `automatic`).
    public var backend: NotificationBackend
    /// Why, in words: "chosen automatically: /.flatpak-info exists", "chosen explicitly".
    public var reason: String
    /// The sandbox the process runs in, if any.
    public var sandbox: Sandbox?

    /// Creates a choice.
    public init(backend: NotificationBackend, reason: String, sandbox: Sandbox? = nil) {
        self.backend = backend
        self.reason = reason
        self.sandbox = sandbox
    }

    /// "portal (chosen automatically: /.flatpak-info exists)".
    public var description: String { "\(backend) (\(reason))" }
}

/// The application sandbox a process runs in.
public enum Sandbox: String, Sendable, Hashable, CaseIterable {
    /// Flatpak: the file `/.flatpak-info` exists (flatpak puts it at the root of every sandbox).
    case flatpak
    /// Snap: `SNAP` and `SNAP_NAME` are set (snapd sets both for every snap's processes).
    case snap

    /// The sandbox this process runs in, if any.
    ///
    /// - Parameters:
    ///   - environment: The environment to look at (`nil`: this process's).
    ///   - fileExists: Whether a file exists (`nil`: look at the file system).
    public static func detect(
        environment: [String: String]? = nil, fileExists: ((String) -> Bool)? = nil
    ) -> Sandbox? {
        // A plain access(2) and two getenv(3): this runs in every `toastkit send`, and FileManager and the whole
        // environment dictionary cost more than the rest of the check.
        let fileExists: (String) -> Bool = fileExists ?? { access($0, F_OK) == 0 }
        if fileExists("/.flatpak-info") { return .flatpak }
        func variable(_ name: String) -> String? {
            if let environment { return environment[name] }
            return getenv(name).map { String(cString: $0) }
        }
        if let snap = variable("SNAP"), !snap.isEmpty, let name = variable("SNAP_NAME"), !name.isEmpty {
            return .snap
        }
        return nil
    }

    /// The app id the portal knows this sandboxed app by: the Flatpak id from `/.flatpak-info` (`[Application]`
    /// `name=`), or `snap.` and the snap's name; nil when it cannot be read.
    ///
    /// - Parameters:
    ///   - environment: The environment to look at (`nil`: this process's).
    ///   - readFile: Reads a text file (`nil`: the file system).
    public func appID(environment: [String: String]? = nil, readFile: ((String) -> String?)? = nil) -> String? {
        switch self {
        case .flatpak:
            let read = readFile ?? { try? String(contentsOfFile: $0, encoding: .utf8) }
            guard let info = read("/.flatpak-info") else { return nil }
            var group = ""
            for line in info.split(separator: "\n") {
                let text = Self.trimmed(line)
                if text.hasPrefix("["), text.hasSuffix("]") {
                    group = String(text.dropFirst().dropLast())
                } else if group == "Application", text.hasPrefix("name=") {
                    let name = Self.trimmed(text.dropFirst("name=".count))
                    return name.isEmpty ? nil : String(name)
                }
            }
            return nil
        case .snap:
            let environment = environment ?? ProcessInfo.processInfo.environment
            guard let name = environment["SNAP_INSTANCE_NAME"] ?? environment["SNAP_NAME"], !name.isEmpty else {
                return nil
            }
            return "snap.\(name)"
        }
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let start = text.firstIndex(where: { !isBlank($0) }), let end = text.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return text[start...end]
    }

    /// What shows it: "/.flatpak-info exists", "SNAP and SNAP_NAME are set".
    public var evidence: String {
        switch self {
        case .flatpak: "/.flatpak-info exists (a Flatpak sandbox)"
        case .snap: "SNAP and SNAP_NAME are set (a Snap sandbox)"
        }
    }
}

extension PresenterConfiguration {
    /// The presenter for ``backend`` in this process: ``PortalNotificationPresenter`` for the portal (in a Flatpak or
    /// Snap sandbox, with ``NotificationBackend/automatic``), ``DesktopNotificationPresenter`` for the notification
    /// server. Both connect at first use; one that cannot reach its service reports `presenterFailed` naming it.
    public func makePresenter() -> any ToastPresenter {
        switch backend.choice().backend {
        case .portal: PortalNotificationPresenter(configuration: self)
        default: DesktopNotificationPresenter(configuration: self)
        }
    }
}
