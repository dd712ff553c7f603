import Testing

@testable import DBus

/// Builds a real libdbus message from `values` and reads it back.
private func roundTrip(_ values: [DBusValue]) throws -> DBusMessage {
    let message = try OutgoingMessage.signal(
        path: "/test", interface: "org.toastkit.Test", member: "RoundTrip", destination: nil, body: values)
    defer { message.release() }
    return DBusMessage(decoding: message.raw)
}

@Suite struct ValueCodingTests {
    static let basics: [DBusValue] = [
        .byte(0), .byte(255), .boolean(true), .boolean(false), .int16(.min), .uint16(.max), .int32(-42),
        .uint32(.max), .int64(.min), .uint64(.max), .double(-1.5), .double(.infinity), .string(""),
        .string("Sincronizando… 同步 🍞"), .objectPath("/org/freedesktop/Notifications"), .signature("a{sv}"),
        .bytes([0, 1, 2, 255]), .bytes([]),
    ]

    @Test(arguments: basics)
    func basicValueRoundTrips(_ value: DBusValue) throws {
        let message = try roundTrip([value])
        #expect(message.body == [value])
        #expect(message.signature == value.signature)
    }

    @Test func hintsDictionaryWithImageData() throws {
        let pixels = (0..<(4 * 3 * 4)).map { UInt8($0) }
        let image = DBusValue.structure([
            .int32(4), .int32(3), .int32(16), .boolean(true), .int32(8), .int32(4), .bytes(pixels),
        ])
        let hints = DBusValue.variantDictionary([
            "urgency": .byte(2), "category": .string("transfer.complete"), "transient": .boolean(true),
            "x": .int32(-7), "image-data": image,
        ])
        let notify: [DBusValue] = [
            .string("app"), .uint32(0), .string("icon"), .string("Título"), .string("Cuerpo"),
            .strings(["default", "Open", "archive", "Archive"]), hints, .int32(-1),
        ]
        let message = try roundTrip(notify)
        #expect(message.signature == "susssasa{sv}i")
        #expect(message.body == notify)
        let decodedHints = try #require(message.body[6].variantDictionaryValue)
        #expect(decodedHints["urgency"] == .byte(2))
        #expect(decodedHints["image-data"]?.signature == "(iiibiiay)")
        #expect(decodedHints["image-data"]?.structValue?[6].bytesValue == pixels)
    }

    @Test(arguments: ["y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "v", "as", "a{sv}", "(ii)", "ay"])
    func emptyArrayKeepsItsElementType(_ element: String) throws {
        let empty = DBusValue.array(try Signature(validating: element), [])
        let message = try roundTrip([empty])
        #expect(message.signature == "a" + element)
        #expect(message.body[0].arrayValue?.isEmpty == true)
        if element != "y" { #expect(message.body == [empty]) }
    }

    @Test func emptyDictionaries() throws {
        let values: [DBusValue] = [
            .dictionary(key: "s", value: "v", []), .dictionary(key: "u", value: "as", []),
            .dictionary(key: "o", value: "a{sv}", []),
        ]
        let message = try roundTrip(values)
        #expect(message.signature == "a{sv}a{uas}a{oa{sv}}")
        #expect(message.body == values)
    }

    @Test func nestedContainers() throws {
        let inner = DBusValue.variantDictionary(["a": .int32(1), "b": .strings(["x", "y"])])
        let values: [DBusValue] = [
            .array("a{sv}", [inner, inner]),
            .array("(sa{sv})", [.structure([.string("k"), inner])]),
            .dictionary(key: "s", value: "a{sv}", [DBusDictEntry(.string("outer"), inner)]),
            .structure([.array("(ii)", [.structure([.int32(1), .int32(2)])]), .variant(.variant(.uint64(9)))]),
            .array("ay", [.bytes([1]), .bytes([])]),
            .variant(.array("v", [.variant(.string("deep"))])),
        ]
        let message = try roundTrip(values)
        #expect(message.signature == "aa{sv}a(sa{sv})a{sa{sv}}(a(ii)v)aayv")
        #expect(message.body == values)
    }

    @Test func byteArrayWrittenAsElementsDecodesAsBytes() throws {
        let message = try roundTrip([.array("y", [.byte(7), .byte(8)])])
        #expect(message.body == [.bytes([7, 8])])
    }

    @Test func wrongSignatureIsAnErrorNotACrash() throws {
        let message = try roundTrip([.string("not a number")])
        let error = #expect(throws: DBusError.self) { try message.arguments("u") }
        #expect(error?.name == DBusError.Name.invalidSignature)
        #expect(error?.message.contains("expected \"u\"") == true)
        #expect(try message.arguments("s") == [.string("not a number")])
    }

    @Test func accessorsReturnNilForOtherTypes() {
        #expect(DBusValue.string("x").uint32Value == nil)
        #expect(DBusValue.uint32(1).stringValue == nil)
        #expect(DBusValue.strings(["a"]).variantDictionaryValue == nil)
        #expect(DBusValue.int32(1).arrayValue == nil)
    }
}

@Suite struct BadInputTests {
    @Test func embeddedNULInAStringIsRejectedWithTheArgumentNamed() {
        let error = #expect(throws: DBusError.self) { try roundTrip([.uint32(1), .string("a\u{0}b")]) }
        #expect(error?.name == DBusError.Name.invalidArgs)
        #expect(error?.message == "argument 1 contains a NUL byte at UTF-8 offset 1")
    }

    @Test func nulDeepInsideAContainerNamesThePath() {
        let hints = DBusValue.variantDictionary(["category": .string("x\u{0}")])
        let error = #expect(throws: DBusError.self) { try roundTrip([hints]) }
        #expect(error?.message == "argument 0[\"category\"] contains a NUL byte at UTF-8 offset 1")
    }

    @Test func invalidUTF8BytesAreRejectedWithTheFieldNamed() {
        let error = #expect(throws: DBusError.self) {
            try DBusValue.string(utf8: [0x66, 0x6f, 0xff, 0xfe], field: "body")
        }
        #expect(error?.name == DBusError.Name.invalidArgs)
        #expect(error?.message == "body is not valid UTF-8 (bad byte at offset 2)")
        #expect((try? DBusValue.string(utf8: Array("olé".utf8), field: "body")) == .string("olé"))
        let nul = #expect(throws: DBusError.self) { try DBusValue.string(utf8: [0x61, 0, 0x62], field: "title") }
        #expect(nul?.message == "title contains a NUL byte at offset 1")
    }

    @Test(arguments: [
        ("not/a/path", "invalid object path \"not/a/path\""), ("/trailing/", "invalid object path \"/trailing/\""),
        ("/a\u{0}b", "object path \"/a\\0b\" contains a NUL byte"),
    ])
    func invalidObjectPath(_ text: String, _ expected: String) {
        let error = #expect(throws: DBusError.self) { try ObjectPath(validating: text) }
        #expect(error?.message.hasPrefix(expected) == true, "\(error?.message ?? "")")
    }

    @Test(arguments: ["", "no-dots", "org..double", "has space.x", "1starts.with.digit"])
    func invalidBusName(_ text: String) {
        let error = #expect(throws: DBusError.self) { try BusName(validating: text) }
        #expect(error?.message.hasPrefix("invalid bus name \"\(text)\"") == true, "\(error?.message ?? "")")
    }

    @Test(arguments: ["", "has.dot", "has-dash", "9digit"])
    func invalidMember(_ text: String) {
        let error = #expect(throws: DBusError.self) { try MemberName(validating: text) }
        #expect(error?.message.hasPrefix("invalid member name \"\(text)\"") == true, "\(error?.message ?? "")")
    }

    @Test func invalidInterfaceErrorNameAndSignature() {
        #expect(throws: DBusError.self) { try InterfaceName(validating: "noDots") }
        #expect(throws: DBusError.self) { try ErrorName(validating: "org.bad..name") }
        #expect(throws: DBusError.self) { try Signature(validating: "a{vs}") }
        #expect(throws: DBusError.self) { try Signature(validating: "(") }
        #expect(throws: DBusError.self) { try Signature(validating: String(repeating: "i", count: 256)) }
    }

    @Test func arrayElementOfTheWrongTypeIsRejected() {
        let error = #expect(throws: DBusError.self) { try roundTrip([.array("s", [.string("a"), .int32(1)])]) }
        #expect(error?.message == "argument 0[1] has type \"i\" but the array holds \"s\"")
    }

    @Test func emptyStructAndBadDictionaryKeysAreRejected() {
        #expect(throws: DBusError.self) { try roundTrip([.structure([])]) }
        let error = #expect(throws: DBusError.self) { try roundTrip([.dictionary(key: "v", value: "s", [])]) }
        #expect(error?.message.contains("a{vs}") == true, "\(error?.message ?? "")")
        #expect(throws: DBusError.self) {
            try roundTrip([.dictionary(key: "s", value: "i", [DBusDictEntry(.string("k"), .string("v"))])])
        }
    }

    @Test func nestingBeyondTheSpecLimitsIsRejected() {
        var deepArray = DBusValue.int32(1)
        for _ in 0..<33 { deepArray = .array(try! Signature(validating: deepArray.signature), [deepArray]) }
        #expect(throws: DBusError.self) { try roundTrip([deepArray]) }

        var deepVariant = DBusValue.int32(1)
        for _ in 0..<70 { deepVariant = .variant(deepVariant) }
        let error = #expect(throws: DBusError.self) { try roundTrip([deepVariant]) }
        #expect(error?.message.contains("nested more than 64 deep") == true)
    }

    @Test func invalidLiteralsAreCaughtBeforeLibdbusSeesThem() throws {
        // After all of the above the process is still here: nothing reached libdbus's abort().
        let message = try roundTrip([.string("still alive")])
        #expect(message.body == [.string("still alive")])
    }
}
