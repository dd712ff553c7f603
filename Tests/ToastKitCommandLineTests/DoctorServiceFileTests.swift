// `toastkit doctor`'s look at the D-Bus service files for org.freedesktop.Notifications (DoctorServiceFiles.swift):
// when several are normal, when one matters, and a fix that holds.
import DBus
import Foundation
import Glibc
import TestSupport
import Testing

/// The service files: information while a server runs or the bus reads none; a warning only when no server runs and
/// the file the bus would start cannot start, is not the desktop's, or is one of several in its folder (issue 43).
@Suite(.timeLimit(.minutes(2))) struct DoctorServiceFileTests {
    /// A desktop with several servers installed has several service files for the name: normal, and while a server
    /// runs the bus starts none of them, so doctor says it as information, not as a warning.
    @Test func serviceFilesWhileAServerRunsAreInformation() async throws {
        try await NotificationEnvironment.withWatched(.dunst) { desktop, _ in
            var env = desktop.toolEnvironment
            let home = "\(desktop.directory)/data-home", system = "\(desktop.directory)/data-system"
            for folder in [home, system] {
                try FileManager.default.createDirectory(
                    atPath: "\(folder)/dbus-1/services", withIntermediateDirectories: true)
            }
            let name = "[D-BUS Service]\nName=org.freedesktop.Notifications\n"
            try (name + "Exec=/usr/bin/mako\n").write(
                toFile: "\(home)/dbus-1/services/mako.service", atomically: true, encoding: .utf8)
            try ("[D-BUS Service]\nName=org.example.Other\nExec=/bin/true\n").write(
                toFile: "\(home)/dbus-1/services/other.service", atomically: true, encoding: .utf8)
            env["XDG_DATA_HOME"] = home
            env["XDG_DATA_DIRS"] = system
            // A player that plays (there is no sound card here, nor a sound server): no warning about the sound.
            env["TOASTKIT_SOUND_PLAYER"] = "/bin/true"
            let one = try doctorReport(try await toastkit(["doctor", "--json"], environment: env).output)
            #expect((one["service_files"] as? [[String: Any]])?.count == 1)
            #expect(doctorFindings(one, topic: "service files").isEmpty, "one file competes with nothing")

            try (name + "Exec=/usr/bin/dunst\n").write(
                toFile: "\(system)/dbus-1/services/dunst.service", atomically: true, encoding: .utf8)
            let two = try await toastkit(["doctor"], environment: env)
            #expect(two.status == 0)
            #expect(!two.lines.contains { $0.hasPrefix("[warning]") }, "\(two.output)")
            let line = try #require(two.lines.first { $0.hasPrefix("[note] service files:") }, "\(two.output)")
            #expect(
                line
                    == "[note] service files: 2 D-Bus service files name org.freedesktop.Notifications: "
                    + "\(home)/dbus-1/services/mako.service (/usr/bin/mako); "
                    + "\(system)/dbus-1/services/dunst.service (/usr/bin/dunst); a server runs, so the bus starts "
                    + "none of them")
        }
    }

    /// Service files in the folders the user's bus would read, on a bus that does not read them (it starts no server):
    /// the advice is to start the installed server by hand, and nothing says the bus would start one.
    @Test func onABusThatCannotStartAServerTheAdviceIsToStartOne() async throws {
        let environment = try await BusOnlyEnvironment()
        defer { environment.stop() }
        let home = "\(environment.directory)/data-home", system = "\(environment.directory)/data-system"
        for (folder, server) in [(home, "mako"), (system, "dunst")] {
            try FileManager.default.createDirectory(
                atPath: "\(folder)/dbus-1/services", withIntermediateDirectories: true)
            try ("[D-BUS Service]\nName=org.freedesktop.Notifications\nExec=/usr/bin/\(server)\n").write(
                toFile: "\(folder)/dbus-1/services/\(server).service", atomically: true, encoding: .utf8)
        }
        var env = environment.environment
        env["XDG_DATA_HOME"] = home
        env["XDG_DATA_DIRS"] = system
        let run = try await toastkit(["doctor", "--json"], environment: env)
        #expect(run.status == 69)
        let json = try doctorReport(run.output)
        let server = try #require(doctorFindings(json, topic: "server").first)
        #expect(server["text"] as? String == "no notification server runs on this bus, and the bus cannot start one")
        #expect(
            server["fix"] as? String
                == "start it yourself (`/usr/bin/mako &`, installed: \(home)/dbus-1/services/mako.service); this bus "
                + "does not read the service files, so it starts no server on demand")
        let files = try #require(doctorFindings(json, topic: "service files").first)
        #expect(files["level"] as? String == "note")
        #expect(
            (files["text"] as? String)?.hasSuffix("; this bus does not read them (it starts no server on demand)")
                == true)
        let all = ((json["findings"] as? [[String: Any]]) ?? []).map { "\($0["text"] ?? "") \($0["fix"] ?? "")" }
        #expect(!all.contains { $0.contains("the bus starts one") }, "\(all)")
    }

    /// No server runs and the bus would start one from a service file whose program is not there: that one file
    /// matters, and doctor warns about it.
    @Test func noServerAndTheFileTheBusWouldStartCannotStartIsAWarning() async throws {
        let (run, folders) = try await doctorWithoutAServer(servicesIn: "data-home", programs: ["gone": "notifyd"])
        let services = folders.services
        #expect(run.status == 69, "\(run.output)")
        #expect(
            run.lines.contains(
                "[warning] service files: no server runs, and the one the bus would start cannot start: "
                    + "\(services)/gone.service (/nonexistent/notifyd): /nonexistent/notifyd does not exist or cannot "
                    + "be run"), "\(run.output)")
        // The file is the user's own (in the folder the bus reads first): removing it is theirs to do.
        #expect(
            run.lines.contains("    → install that server, or remove \(services)/gone.service"), "\(run.output)")
        // doctor sent no toast: the bus could not start the server, said as such.
        let serverLine = try #require(run.lines.firstIndex { $0.hasPrefix("[problem] server:") }, "\(run.output)")
        #expect(
            run.lines[serverLine].hasPrefix("[problem] server: the bus could not start a notification server: "),
            "\(run.output)")
        #expect(
            run.lines[serverLine + 1]
                == "    → the bus could not start the server its service file names (see `service files`); install "
                + "it, or start your desktop's notification server yourself")
    }

    /// No server runs, and the system's folder holds several service files for the name (one per installed server):
    /// the bus starts whichever it reads first, so doctor warns, and its fix is not to remove a package's file (the
    /// package puts it back) but a copy of the desktop's own in the folder the bus reads first, which wins.
    @Test func severalFilesTheBusCouldStartAreAWarningWithAFixThatHolds() async throws {
        let (run, folders) = try await doctorWithoutAServer(
            servicesIn: "data-system", programs: ["mako": "mako", "xfce4-notifyd": "xfce4-notifyd"], desktop: "XFCE")
        let system = folders.services, home = folders.home
        #expect(run.status == 69, "\(run.output)")
        let warning = try #require(run.lines.firstIndex { $0.hasPrefix("[warning] service files:") }, "\(run.output)")
        #expect(
            run.lines[warning]
                == "[warning] service files: no server runs, and 2 service files in \(system) name "
                + "org.freedesktop.Notifications: \(system)/mako.service (/nonexistent/mako); "
                + "\(system)/xfce4-notifyd.service (/nonexistent/xfce4-notifyd); the bus starts whichever it reads first"
        )
        #expect(
            run.lines[warning + 1]
                == "    → `mkdir -p '\(home)' && cp '\(system)/xfce4-notifyd.service' '\(home)/'` (the bus reads \(home) "
                + "first, and a service file there wins over the others)", "\(run.output)")
        #expect(!run.output.contains("remove"), "a package's file is not removed: \(run.output)")
    }

    /// `toastkit doctor` where no server runs, on a bus whose service folder is `FOLDER/dbus-1/services` (`data-home`,
    /// the user's, which the bus reads first, or `data-system`) with one service file for the name per entry of
    /// `programs` (file name → a program that does not exist), and `XDG_CURRENT_DESKTOP` set to `desktop`. Returns the
    /// run, the service folder, and the user's folder (`data-home/dbus-1/services`).
    private func doctorWithoutAServer(
        servicesIn folder: String, programs: [String: String], desktop: String? = nil
    ) async throws -> (run: ToolProcess.Result, folders: (services: String, home: String)) {
        let directory = try Tools.makeTemporaryDirectory(prefix: "toastkit-doctor")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let services = "\(directory)/\(folder)/dbus-1/services", home = "\(directory)/data-home/dbus-1/services"
        try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
        for (name, program) in programs {
            try ("[D-BUS Service]\nName=org.freedesktop.Notifications\nExec=/nonexistent/\(program)\n").write(
                toFile: "\(services)/\(name).service", atomically: true, encoding: .utf8)
        }
        let bus = try await PrivateBus.start(serviceDirectory: services)
        defer { bus.stop() }
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        env["XDG_DATA_HOME"] = "\(directory)/data-home"
        env["XDG_DATA_DIRS"] = folder == "data-home" ? "\(directory)/none" : "\(directory)/\(folder)"
        env["XDG_CURRENT_DESKTOP"] = desktop
        env["TOASTKIT_NO_AGENT"] = "1"
        return (try await toastkit(["doctor"], environment: env), (services, home))
    }
}
