import FreedesktopNotifications
import Glibc
import ToastKit

/// `toastkit doctor`'s look at the D-Bus service files that name `org.freedesktop.Notifications`: which one the bus
/// would start when no server runs, and whether that one matters. A desktop with several servers installed has
/// several such files, which is normal; only the one the bus would activate counts, and only when no server runs.
struct ServiceFiles {
    /// One service file: where it is, its folder, and its `Exec=` line.
    struct File {
        var path: String
        var folder: String
        var exec: String
    }

    /// The files, in the order the session bus reads their folders (`$XDG_DATA_HOME`, then each of
    /// `$XDG_DATA_DIRS`).
    let found: [File]
    /// `$XDG_DATA_HOME/dbus-1/services`, where a file of the same name overrides one of the system's.
    let overrideFolder: String
    /// The environment, for `PATH` and `XDG_CURRENT_DESKTOP`.
    private let environment: CommandEnvironment

    init(environment: CommandEnvironment) {
        self.environment = environment
        let home = environment.variable("HOME") ?? ""
        let dataHome = environment.variable("XDG_DATA_HOME").flatMap { $0.isEmpty ? nil : $0 } ?? "\(home)/.local/share"
        let dataDirs =
            (environment.variable("XDG_DATA_DIRS").flatMap { $0.isEmpty ? nil : $0 }
            ?? "/usr/local/share:/usr/share").split(separator: ":").map(String.init)
        overrideFolder = "\(dataHome)/dbus-1/services"
        var found: [File] = []
        for folder in ([dataHome] + dataDirs).map({ "\($0)/dbus-1/services" }) {
            for file in PrivateFiles.names(in: folder) where file.hasSuffix(".service") {
                let path = "\(folder)/\(file)"
                guard let text = LocalFiles.text(of: path, limit: 65536) else { continue }
                let lines = text.split(separator: "\n").map(\.trimmed)
                guard lines.contains("Name=\(NotificationsClient.busName.rawValue)") else { continue }
                let exec = lines.first { $0.hasPrefix("Exec=") }.map { String($0.dropFirst(5)) } ?? "?"
                found.append(File(path: path, folder: folder, exec: exec))
            }
        }
        self.found = found
    }

    /// Adds what the files mean here: information while a server runs or the bus reads none of them; a warning
    /// only when no server runs, the bus would start one, and that one cannot start, is not the desktop's, or
    /// cannot be told (two in the folder the bus reads first).
    func check(_ report: inout DoctorCommand.Report, serverRuns: Bool, activatable: Bool) {
        report.details["service_files"] = .array(
            found.map { .object(["path": .string($0.path), "exec": .string($0.exec)]) })
        guard let first = found.first else { return }
        let count = found.count == 1 ? "1 D-Bus service file names" : "\(found.count) D-Bus service files name"
        let list = found.map { "\($0.path) (\($0.exec))" }.joined(separator: "; ")
        if serverRuns {
            guard found.count > 1 else { return }
            report.add(
                "service files", .note,
                "\(count) org.freedesktop.Notifications: \(list); a server runs, so the bus starts none of them")
            return
        }
        guard activatable else {
            report.add(
                "service files", .note,
                "\(count) org.freedesktop.Notifications: \(list); this bus does not read them (it starts no server "
                    + "on demand)")
            return
        }
        let candidates = found.filter { $0.folder == first.folder }
        guard candidates.count == 1 else {
            let names = candidates.map { "\($0.path) (\($0.exec))" }.joined(separator: "; ")
            report.add(
                "service files", .warning,
                "no server runs, and \(candidates.count) service files in \(first.folder) name "
                    + "org.freedesktop.Notifications: \(names); the bus starts whichever it reads first",
                fix: first.folder == overrideFolder
                    ? "remove the ones you do not want from \(overrideFolder)" : choosing(desktopsFile))
            return
        }
        if let problem = problem(starting: first.exec) {
            report.add(
                "service files", .warning,
                "no server runs, and the one the bus would start cannot start: \(first.path) (\(first.exec)): "
                    + problem,
                fix: first.folder == overrideFolder
                    ? "install that server, or remove \(first.path)"
                    : "install that server, or have the bus start another: "
                        + choosing(desktopsFile.flatMap { $0.path == first.path ? nil : $0 }))
        } else if let expected = expectedServer,
            program(of: first.exec).split(separator: "/").last.map(String.init)
                != expected
        {
            report.add(
                "service files", .warning,
                "no server runs, and the bus would start \(first.exec) (\(first.path)), not this desktop's "
                    + "\(expected)",
                fix: first.folder == overrideFolder
                    ? "remove \(first.path)"
                    : desktopsFile.map(choosing) ?? "install \(expected), then \(choosing(nil))")
        } else {
            let others = found.count > 1 ? "; the other \(found.count - 1) are not used" : ""
            report.add(
                "service files", .note,
                "no server runs; the bus starts \(first.exec) (\(first.path)) on demand\(others)")
        }
    }

    /// How to have the bus start the server the person wants instead of the one it would: a service file in
    /// ``overrideFolder`` (`$XDG_DATA_HOME/dbus-1/services`, the folder the session bus reads first) wins over the
    /// other folders' files for the same name, whatever its file name (dbus-daemon 1.14); so a copy of `wanted`'s
    /// file there, or of the one the person picks. Never "remove" a file of the system's: its package puts it back.
    private func choosing(_ wanted: File?) -> String {
        let wins = "the bus reads \(overrideFolder) first, and a service file there wins over the others"
        guard let wanted else { return "copy the service file of the server you want into \(overrideFolder) (\(wins))" }
        return "`mkdir -p '\(overrideFolder)' && cp '\(wanted.path)' '\(overrideFolder)/'` (\(wins))"
    }

    /// The service file of this desktop's own server (``expectedServer``), when one is installed.
    private var desktopsFile: File? {
        guard let expected = expectedServer else { return nil }
        return found.first { program(of: $0.exec).split(separator: "/").last.map(String.init) == expected }
    }

    /// The program of an `Exec=` line: its first word.
    private func program(of exec: String) -> String {
        String(exec.split(separator: " ", omittingEmptySubsequences: true).first ?? "")
    }

    /// Why the program of `exec` cannot start (missing, not executable), or nil when it can.
    private func problem(starting exec: String) -> String? {
        let program = program(of: exec)
        guard !program.isEmpty, program != "?" else { return "it has no Exec= line" }
        if program.hasPrefix("/") {
            return access(program, X_OK) == 0 ? nil : "\(program) does not exist or cannot be run"
        }
        let path = environment.variable("PATH") ?? "/usr/local/bin:/usr/bin:/bin"
        let found = path.split(separator: ":").contains { access("\($0)/\(program)", X_OK) == 0 }
        return found ? nil : "\(program) is not on the PATH"
    }

    /// The notification server of the desktop `XDG_CURRENT_DESKTOP` names, where it is a program of its own with a
    /// service file (GNOME Shell owns the name itself, and needs none).
    private var expectedServer: String? {
        let desktops = (environment.variable("XDG_CURRENT_DESKTOP") ?? "").uppercased().split(separator: ":")
        let servers = [
            "XFCE": "xfce4-notifyd", "MATE": "mate-notification-daemon", "LXQT": "lxqt-notificationd",
            "KDE": "plasmashell",
        ]
        return desktops.lazy.compactMap { servers[String($0)] }.first
    }
}

extension Substring {
    /// Without spaces, tabs and carriage returns at either end.
    fileprivate var trimmed: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(drop(while: blank).reversed().drop(while: blank).reversed())
    }
}
