internal import CDBus
import Testing

@testable import DBus

@Suite struct SignatureShortcutTests {
    @Test func oneByteSignaturesGetLibdbusVerdictWithoutAskingIt() {
        for byte in UInt8(1)...UInt8(127) {
            let text = String(decoding: [byte], as: UTF8.self)
            let libdbus = text.withCString { dbus_signature_validate_single($0, nil) } != 0
            #expect(Signature(unchecked: text).isSingleCompleteType == libdbus, "\(text.debugEscaped)")
        }
        #expect(Signature(unchecked: "a{sv}").isSingleCompleteType)
        #expect(!Signature(unchecked: "ss").isSingleCompleteType)
    }
}
