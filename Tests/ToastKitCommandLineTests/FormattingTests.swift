import DBus
import Testing
import ToastKit
import ToastKitAgent

@testable import ToastKitCommandLine

/// Standard input limits, JSON lines, the style's overrides and the bus-traffic lines (pure parts).
@Suite(.timeLimit(.minutes(2))) struct FormattingTests {
    /// Standard input as `read(2)` hands it over, in chunks of `size` bytes.
    private func readStandardInput(_ bytes: [UInt8], chunks size: Int = 65_536) throws(CommandFailure)
        -> MessageInput.Result
    {
        var reader = StandardInputReader(limit: MessageInput.limit)
        var start = 0
        while start < bytes.count {
            try reader.consume(bytes[start..<min(bytes.count, start + size)])
            start += size
        }
        return try reader.finish()
    }

    @Test func standardInputIsCheckedAndCut() throws {
        #expect(try readStandardInput(Array("l1\nl2\n\n".utf8)) == .init(text: "l1\nl2", warning: nil))
        #expect(throws: CommandFailure.data("MESSAGE from standard input is not valid UTF-8 (byte 0xff at offset 2)")) {
            try readStandardInput([0x61, 0x62, 0xFF])
        }
        let big = [UInt8](repeating: UInt8(ascii: "a"), count: 8_388_608)
        let cut = try readStandardInput(big)
        #expect(cut.text.utf8.count == MessageInput.limit)
        #expect(cut.text.hasSuffix("…"))
        #expect(cut.warning == "warning: message from stdin cut from 8388608 to 65536 bytes")
        // A cut inside a multi-byte character keeps whole characters only.
        let accents = Array(String(repeating: "é", count: MessageInput.limit / 2 + 2).utf8)
        let cutAccents = try readStandardInput(accents)
        #expect(cutAccents.text.utf8.count <= MessageInput.limit)
        #expect(cutAccents.text.dropLast().allSatisfy { $0 == "é" })
        #expect(MessageInput.limited(String(repeating: "x", count: 70_000)).text.utf8.count == MessageInput.limit)
    }

    /// A sequence split across two reads is checked as one: the validator keeps its state between chunks, and
    /// reports what the whole-text check reports.
    @Test(arguments: [1, 2, 3, 7])
    func utf8IsCheckedAcrossChunkBoundaries(_ size: Int) throws {
        let text = Array("añ€𝄞".utf8)
        #expect(try readStandardInput(text, chunks: size).text == "añ€𝄞")
        for bad: [UInt8] in [
            [0x61, 0xE2, 0x82], [0x61, 0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
        ] {
            let expected = try #require(UTF8Problem.first(in: bad))
            #expect(
                throws: CommandFailure.data(
                    "MESSAGE from standard input is not valid UTF-8 (byte 0x\(expected.hexByte) at offset \(expected.offset))"
                )
            ) {
                try readStandardInput(bad, chunks: size)
            }
        }
    }

    @Test func jsonLinesAreEscapedAndOrdered() {
        let object: JSONObject = [
            "event": .string("action"), "id": .string("a\"b\\c\n\u{1}"), "server_id": .integer(7),
            "activation_token": .null, "ok": .bool(true),
        ]
        #expect(
            object.serialized
                == #"{"event":"action","id":"a\"b\\c\n\u0001","server_id":7,"activation_token":null,"ok":true}"#)
    }

    @Test func styleOverridesTheStatus() {
        var options = SendOptions(title: "T")
        options.status = .error
        options.urgency = .low
        options.category = "email.arrived"
        options.transient = true
        options.hints = [Hint(name: "x-n", value: .int32(5)), Hint(name: "urgency", value: .byte(1))]
        let style = CommandLineStyle(options: options)
        let request = style.makeRequest(for: PresentedToast(id: "a", status: .error, title: "T"))
        #expect(request.urgency == .low)
        #expect(request.category == "email.arrived")
        #expect(request.isTransient)
        #expect(request.hints["x-n"] == .int32(5))
        #expect(request.icon == .system("dialog-error"))
        let plain = CommandLineStyle(options: SendOptions(title: "T"))
        #expect(plain.makeRequest(for: PresentedToast(id: "a", status: .error, title: "T")).urgency == .critical)
    }

    @Test func builtInActions() {
        let later = ToastOptions.action(ActionOption(id: "later", label: nil))
        #expect(later.effect == .later && later.builtInLabel == .later)
        let luego = ToastOptions.action(ActionOption(id: "later", label: "Luego"))
        #expect(luego.effect == .later && luego.title == "Luego" && luego.builtInLabel == nil)
        let open = ToastOptions.action(ActionOption(id: "open", label: nil), tap: true)
        #expect(open.builtInLabel == .open)
        let archive = ToastOptions.action(ActionOption(id: "archive", label: "Archivar", confirmation: "Hecho"))
        #expect(archive.title == "Archivar" && archive.confirmation == "Hecho" && archive.effect == .dismiss)
    }

    @Test func trafficLines() {
        var formatter = TrafficFormatter(json: false)
        let call = DBusMessage(
            kind: .methodCall, serial: 9, sender: ":1.5", interface: "org.freedesktop.Notifications",
            member: "Notify",
            body: [
                .string("x"), .uint32(0), .string(""), .string("Hola"), .string("Mundo"),
                .strings(["default", "Abrir"]),
                .variantDictionary(["urgency": .byte(1)]), .int32(4000),
            ])
        #expect(formatter.lines(for: call).isEmpty, "printed when the reply brings the id")
        let reply = DBusMessage(kind: .methodReturn, replySerial: 9, destination: ":1.5", body: [.uint32(7)])
        #expect(
            formatter.lines(for: reply) == [
                #"notify :1.5 id=7 app="x" summary="Hola" body="Mundo" replaces=0 actions=["default","Abrir"] hints={urgency=byte:1} expire=4000"#
            ])
        let closed = DBusMessage(
            kind: .signal, sender: ":1.2", path: "/org/freedesktop/Notifications",
            interface: "org.freedesktop.Notifications", member: "NotificationClosed", body: [.uint32(7), .uint32(2)])
        #expect(formatter.lines(for: closed) == ["closed id=7 reason=dismissed"])
        var json = TrafficFormatter(json: true)
        #expect(
            json.lines(for: closed) == [
                #"{"event":"closed","sender":":1.2","id":7,"reason":"dismissed","reason_code":2}"#
            ])
    }
}
