import DBus
import Foundation
import FreedesktopNotifications
import TestSupport
import Testing
import ToastModel

/// The toast model onto the notification portal's vardict, without a bus (issue 14).
@Suite struct PortalMappingTests {
    static let configuration = PresenterConfiguration(appName: "tests")

    static func presentation(
        _ status: ToastStatus = .normal, title: String = "Hola", message: String? = "Cuerpo", icon: ToastIcon? = nil,
        actions: [PresentedAction] = [], confirmation: Bool = false
    ) -> ToastPresentation {
        let toast = PresentedToast(
            id: "t", status: status, title: title, message: message, icon: icon, actions: actions,
            remaining: .seconds(4), isTimerRunning: true, isConfirmation: confirmation)
        return ToastPresentation(toast: toast, request: ThemedToastStyle(theme: .standard).makeRequest(for: toast))
    }

    static func map(
        _ presentation: ToastPresentation, version: UInt32 = 1,
        configuration: PresenterConfiguration = configuration, iconFile: PortalIconFile? = nil
    ) throws -> PortalNotification {
        try PortalNotificationMapping.notification(
            presentation, version: version, configuration: configuration, iconFile: iconFile)
    }

    static let version1Keys: Set<String> = ["title", "body", "icon", "priority", "default-action", "buttons"]

    @Test func aVersion1NotificationCarriesOnlyTheKeysVersion1Takes() throws {
        let tap = PresentedAction(key: "default", actionID: "open", title: "Abrir", role: .tap)
        let archive = PresentedAction(key: "archive", actionID: "archive", title: "Archivar", role: .leading)
        let later = PresentedAction(key: "later", actionID: "later", title: "Later", role: .trailing)
        let mapped = try Self.map(Self.presentation(.warning, actions: [tap, archive, later], confirmation: true))
        #expect(Set(mapped.fields.keys).isSubset(of: Self.version1Keys))
        #expect(mapped.fields["title"] == .string("Hola"))
        #expect(mapped.fields["body"] == .string("Cuerpo"))
        #expect(mapped.fields["priority"] == .string("normal"))
        #expect(mapped.fields["icon"] == .structure([.string("themed"), .variant(.strings(["dialog-warning"]))]))
        #expect(mapped.fields["default-action"] == .string("default"))
        let buttons = try #require(mapped.fields["buttons"]?.arrayValue).compactMap(\.variantDictionaryValue)
        #expect(buttons.map { $0["label"] } == [.string("Archivar"), .string("Later")], "leading first")
        #expect(buttons.map { $0["action"] } == [.string("archive"), .string("later")])
        #expect(mapped.actionKeys == ["default": "default", "archive": "archive", "later": "later"])
        #expect(mapped.degradations.isEmpty, "a transient confirmation is not worth a warning: \(mapped.degradations)")
        // The wire form: (s id, a{sv}) with every value in a variant.
        let arguments = mapped.arguments(id: "toastkit-1")
        #expect(arguments.first == .string("toastkit-1"))
        #expect(arguments.last?.signature == "a{sv}")
    }

    @Test(arguments: [(ToastStatus.normal, "normal"), (.success, "normal"), (.error, "urgent")])
    func theStatusUrgencyBecomesThePriority(status: ToastStatus, priority: String) throws {
        #expect(try Self.map(Self.presentation(status)).fields["priority"] == .string(priority))
        #expect(PortalNotificationMapping.priority(.low) == "low")
    }

    @Test func symbolNamesBecomeThemedIconNames() throws {
        let mapped = try Self.map(Self.presentation(icon: .system("photo.on.rectangle")))
        #expect(mapped.fields["icon"] == .structure([.string("themed"), .variant(.strings(["image-x-generic"]))]))
    }

    /// An empty icon name, path or image is no icon, and an empty category none (issue 43): the notification goes
    /// out without them, and nothing is said (no category "" left out).
    @Test func anEmptyIconOrCategoryIsNone() throws {
        for icon in [ToastIcon.system(""), .file(""), .image(width: 0, height: 0, rgba: [])] {
            var presentation = Self.presentation(icon: icon)
            presentation.request.category = ""
            let mapped = try Self.map(presentation)
            #expect(mapped.fields["title"] == .string("Hola"))
            #expect(mapped.fields["icon"] == nil && mapped.fields["category"] == nil)
            #expect(mapped.degradations.isEmpty, "\(mapped.degradations)")
        }
    }

    @Test func actionIDsThatAreNotGActionNamesAreRenamed() {
        for valid in ["archive", "reply-2", "org.example.x"] {
            #expect(PortalNotificationMapping.isValidActionName(valid))
        }
        for invalid in ["", "default", "app.delete", "open file", "ñ", "a_b", "x::y"] {
            #expect(!PortalNotificationMapping.isValidActionName(invalid), "\(invalid)")
        }
    }

    @Test func markupIsStrippedForVersion1AndSentAsMarkupBodyToVersion2() throws {
        var configuration = Self.configuration
        configuration.markup = .basic
        let presentation = Self.presentation(message: "<b>Ana</b> & <u>Luis</u>")
        let v1 = try Self.map(presentation, configuration: configuration)
        #expect(v1.fields["body"] == .string("Ana & Luis"))
        #expect(v1.fields["markup-body"] == nil)
        #expect(v1.degradations == ["the notification portal (version 1) has no markup: tags stripped"])
        let v2 = try Self.map(presentation, version: 2, configuration: configuration)
        #expect(v2.fields["markup-body"] == .string("<b>Ana</b> &amp; <u>Luis</u>"))
        #expect(v2.fields["body"] == .string("Ana & Luis"))
        // Plain text is sent as it is: the portal's body is plain text.
        #expect(try Self.map(Self.presentation(message: "a < b & c")).fields["body"] == .string("a < b & c"))
    }

    @Test func version2KeysGoOnlyToAVersion2Portal() throws {
        var presentation = Self.presentation(confirmation: true)
        presentation.request.category = "im.received"
        presentation.request.soundName = "message-new-instant"
        presentation.request.hints["x-vendor"] = .string("v")
        presentation.request.actions = [ToastRequest.Action(key: "answer", label: "Answer", purpose: "call.accept")]
        let v1 = try Self.map(presentation)
        #expect(Set(v1.fields.keys).isSubset(of: Self.version1Keys))
        #expect(
            v1.degradations.sorted() == [
                "the notification portal (version 1) has no button purposes: left out",
                "the notification portal (version 1) takes no category \"im.received\", hints x-vendor: left out",
            ])
        #expect(v1.localSound == .named("message-new-instant"), "played by the presenter")
        let v2 = try Self.map(presentation, version: 2)
        #expect(v2.fields["category"] == .string("im.received"))
        #expect(v2.fields["sound"] == .string("default"))
        #expect(v2.fields["display-hint"] == .strings(["transient"]))
        let button = try #require(v2.fields["buttons"]?.arrayValue?.first?.variantDictionaryValue)
        #expect(button["purpose"] == .string("call.accept"))
        // What version 2 would refuse is left out, not sent.
        presentation.request.category = "email.arrived"
        presentation.request.hints = ["suppress-sound": .bool(true)]
        let unknown = try Self.map(presentation, version: 2)
        #expect(unknown.fields["category"] == nil)
        #expect(unknown.fields["sound"] == .string("silent"))
    }

    @Test func badInputIsAnErrorNamingTheFieldAndLongMessagesAreCut() throws {
        #expect(throws: ToastValidationError.self) { try Self.map(Self.presentation(title: "a\u{0}b")) }
        let bad = ToastIcon.image(width: 2, height: 2, rgba: [1, 2, 3])
        #expect(throws: ToastValidationError.self) { try Self.map(Self.presentation(icon: bad)) }
        var configuration = Self.configuration
        configuration.maximumMessageLength = 10
        let cut = try Self.map(
            Self.presentation(message: String(repeating: "x", count: 50)), configuration: configuration)
        #expect(cut.fields["body"] == .string("xxxxxxx…"))
        #expect(cut.degradations.count == 1)
    }

    // MARK: - Icons the portal takes

    @Test func rawPixelsBecomeAPNGThePortalsOwnValidatorAccepts() throws {
        let validator = "/usr/libexec/xdg-desktop-portal-validate-icon"
        guard FileManager.default.isExecutableFile(atPath: validator) else {
            throw TestEnvironmentError("\(validator) is missing: apt-get install xdg-desktop-portal")
        }
        let folder = try Tools.makeTemporaryDirectory(prefix: "toastkit-png")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (width, height) in [(1, 1), (48, 32), (300, 20), (1024, 600)] {
            var rgba: [UInt8] = []
            for y in 0..<height {
                for x in 0..<width { rgba += [UInt8(x & 0xFF), UInt8(y & 0xFF), 200, 255] }
            }
            let mapped = try Self.map(Self.presentation(icon: .image(width: width, height: height, rgba: rgba)))
            let icon = try #require(mapped.fields["icon"]?.structValue)
            #expect(icon.first == .string("bytes"))
            let png = try #require(icon.last?.variantValue?.bytesValue)
            let path = "\(folder)/\(width)x\(height).png"
            try Data(png).write(to: URL(fileURLWithPath: path))
            let result = try Tools.run(validator, ["512", "512", path])
            #expect(result.status == 0, "\(width)x\(height): \(result.error)")
            let expectedWidth = min(512, max(width, height))
            #expect(result.output.contains("format=png") && result.output.contains("width=\(expectedWidth)"))
            #expect(mapped.degradations.count == (width > 512 ? 1 : 0))
        }
    }

    @Test func iconFilesAreSentAsBytesWhenThePortalWouldKeepThem() throws {
        let png = try #require(
            try Self.map(Self.presentation(icon: .image(width: 2, height: 2, rgba: .init(repeating: 9, count: 16))))
                .fields["icon"]?.structValue?.last?.variantValue?.bytesValue)
        let file = Self.presentation(icon: .file("/icons/a.png"))
        let good = try Self.map(file, iconFile: .bytes(png))
        #expect(good.fields["icon"] == .structure([.string("bytes"), .variant(.bytes(png))]))
        #expect(good.degradations.isEmpty)

        let text = try Self.map(file, iconFile: .bytes(Array("not an image".utf8)))
        #expect(text.fields["icon"] == nil)
        #expect(
            text.degradations == [
                "icon file /icons/a.png is not a PNG, JPEG or SVG image (the only kinds the portal takes): sent without "
                    + "an icon"
            ])
        var huge = png
        huge.replaceSubrange(16..<24, with: [0, 0, 4, 0, 0, 0, 4, 0])  // IHDR: 1024x1024
        #expect(try Self.map(file, iconFile: .bytes(huge)).degradations.first?.contains("1024x1024 PNG") == true)
        huge.replaceSubrange(16..<24, with: [0, 0, 0, 48, 0, 0, 0, 32])  // 48x32
        #expect(try Self.map(file, iconFile: .bytes(huge)).degradations.first?.contains("not square") == true)
        let svg = Array("<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8)
        #expect(try Self.map(file, iconFile: .bytes(svg)).fields["icon"] != nil)
        let folder = try Tools.makeTemporaryDirectory(prefix: "toastkit-icon")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let big = "\(folder)/big.png"
        try Data(count: 5 * 1024 * 1024).write(to: URL(fileURLWithPath: big))
        #expect(
            PortalIconFile.read(big) == .unreadable("icon file \(big) has 5242880 bytes, more than an icon's 4 MiB"))
        // Before: the limit was checked on the link, so a link to a 300 MB file read all of it (624 MB, 1.8 s), and a
        // 1 GB one exited 70. Now the limit holds on what is opened, before a byte is read; a FIFO never blocks.
        let sparse = "\(folder)/sparse"
        let descriptor = open(sparse, O_WRONLY | O_CREAT, 0o600)
        #expect(ftruncate(descriptor, 1 << 30) == 0)
        close(descriptor)
        let link = "\(folder)/link.png"
        #expect(symlink(sparse, link) == 0)
        #expect(
            PortalIconFile.read(link)
                == .unreadable("icon file \(link) has 1073741824 bytes, more than an icon's 4 MiB"))
        let fifo = "\(folder)/fifo.png"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(PortalIconFile.read(fifo) == .unreadable("icon file \(fifo) is not a regular file"))
        let small = "\(folder)/small.png"
        try Data(png).write(to: URL(fileURLWithPath: small))
        #expect(PortalIconFile.read(small) == .bytes(png))
        let missing = try Self.map(file, iconFile: PortalIconFile.read("/nonexistent/icon.png"))
        #expect(missing.fields["icon"] == nil)
        #expect(missing.degradations.first?.hasPrefix("icon file /nonexistent/icon.png does not exist") == true)
    }

    // MARK: - The signal and the backend choice

    @Test func actionInvokedCarriesTheTokenOfAVersion2Portal() {
        let v1 = PortalActionInvoked(id: "n", action: "archive", parameter: [])
        #expect(v1.activationToken == nil)
        let v2 = PortalActionInvoked(
            id: "n", action: "archive",
            parameter: [.string("target"), .variantDictionary(["activation-token": .string("xdg-123")])])
        #expect(v2.activationToken == "xdg-123")
    }

    @Test func theAutomaticBackendIsThePortalInASandboxAndTheServerOutside() {
        let none: (String) -> Bool = { _ in false }
        let flatpak: (String) -> Bool = { $0 == "/.flatpak-info" }
        #expect(Sandbox.detect(environment: [:], fileExists: none) == nil)
        #expect(Sandbox.detect(environment: [:], fileExists: flatpak) == .flatpak)
        #expect(Sandbox.detect(environment: ["SNAP": "/snap/x/1", "SNAP_NAME": "x"], fileExists: none) == .snap)
        #expect(Sandbox.detect(environment: ["SNAP": "/snap/x/1"], fileExists: none) == nil, "both must be set")
        #expect(NotificationBackend.automatic.choice(environment: [:], fileExists: none).backend == .notifications)
        let sandboxed = NotificationBackend.automatic.choice(environment: [:], fileExists: flatpak)
        #expect(sandboxed.backend == .portal)
        #expect(sandboxed.description == "portal (chosen automatically: /.flatpak-info exists (a Flatpak sandbox))")
        #expect(
            NotificationBackend.notifications.choice(environment: [:], fileExists: flatpak).backend == .notifications)
        #expect(NotificationBackend(rawValue: "auto") == .automatic)
    }

    @Test func theSandboxedAppIDIsTheOneThePortalUses() {
        let info =
            "[Application]\nname=org.example.PortalTest\nruntime=runtime/org.example.MiniPlatform/x86_64/1\n"
            + "\n[Instance]\ninstance-id=1\n"
        #expect(Sandbox.flatpak.appID(readFile: { $0 == "/.flatpak-info" ? info : nil }) == "org.example.PortalTest")
        #expect(Sandbox.flatpak.appID(readFile: { _ in "[Instance]\nname=x\n" }) == nil)
        #expect(Sandbox.flatpak.appID(readFile: { _ in nil }) == nil)
        #expect(Sandbox.snap.appID(environment: ["SNAP_NAME": "fotos"]) == "snap.fotos")
        #expect(
            Sandbox.snap.appID(environment: ["SNAP_NAME": "fotos", "SNAP_INSTANCE_NAME": "fotos_2"]) == "snap.fotos_2")
    }
}
