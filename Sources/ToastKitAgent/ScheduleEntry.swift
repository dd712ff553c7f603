// One scheduled toast as the user's store keeps it (``ScheduleStore/Entry``): its disk form, the name of the file of
// its own it is kept in (made from its id, never a path the id picks) and the checks that file must pass when read.
import FoundationEssentials

extension ScheduleStore {
    /// One scheduled toast.
    package struct Entry: Codable, Sendable, Equatable {
        /// The toast's id.
        package var id: String
        /// When it is due, in seconds since 1970.
        package var due: Double
        /// The toast as its sender gave it (without its schedule), with its sender's whole environment while the
        /// runtime file of the rest is there (``KeptEnvironment``).
        package var request: AgentRequest
        /// The token of the runtime file that holds the sender's variables not kept on disk (nil: there were none).
        package var setAside: String?
        /// That file was not there when the entry was read (the session it was sent in ended, the machine restarted):
        /// the request has the kept variables only.
        package var setAsideLost = false

        /// The keys of the disk form.
        package enum CodingKeys: String, CodingKey {
            case id, due, request
            case setAside = "environment_set_aside"
        }

        /// The schedule of toast `id`, due at `due` (seconds since 1970).
        package init(id: String, due: Double, request: AgentRequest) {
            self.id = id
            self.due = due
            self.request = request
        }

        /// Reads the disk form: the request is checked as the journal's are (``SavedRequest``), and takes the entry's
        /// id.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(String.self, forKey: .id)
            due = try container.decode(Double.self, forKey: .due)
            do {
                request = try container.decode(SavedRequest.self, forKey: .request).request()
                // The saved request leaves the id to the entry: the toast that comes due is the one of this id (it
                // came as `toastkit-<uuid>`, which `close --id`, `wait --id` and the settling never found).
                request.options.id = id
            } catch let error as SavedRequest.Invalid {
                throw AgentStore.Refusal(description: "scheduled toast \"\(id)\": \(error.description) is not valid")
            }
            setAside = try container.decodeIfPresent(String.self, forKey: .setAside)
            if let setAside, !KeptEnvironment.isToken(setAside) {
                throw AgentStore.Refusal(
                    description: "scheduled toast \"\(id)\": environment_set_aside \"\(setAside)\" is not valid")
            }
        }

        /// The disk form: the request with only the kept part of its environment (``KeptEnvironment/isKept(_:)``),
        /// and the token of the runtime file of the rest.
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(due, forKey: .due)
            var kept = request
            kept.environment = request.environment.map { KeptEnvironment.split($0).kept }
            try container.encode(SavedRequest(kept), forKey: .request)
            try container.encodeIfPresent(setAside, forKey: .setAside)
        }

        /// Refuses an entry no sender wrote: an empty id, or a time before 2020 or past the year 9999.
        func checkRange() throws(AgentStore.Refusal) {
            guard !id.isEmpty else { throw AgentStore.Refusal(description: "a toast without an id") }
            guard due.isFinite, due > 1_577_836_800, due < 253_402_300_800 else {
                throw AgentStore.Refusal(description: "toast \"\(id)\": the time \(due) is out of range")
            }
        }
    }

    /// The whole of one entry's file: `{"format":"toastkit-scheduled","version":2,"toast":{…}}`.
    struct EntryFile: Codable {
        var format: String
        var version: Int
        var toast: Entry
    }

    /// The entry of the file `name` as its bytes say, checked: this format and version, values in range, and the
    /// file the one named after its toast's id (a file copied under another name would be a second schedule of the
    /// id). `whole`: it has variables that are not kept (not written by a store).
    static func decode(_ bytes: [UInt8], name: String) throws(AgentStore.Refusal) -> (entry: Entry, whole: Bool) {
        let file: EntryFile
        do {
            file = try JSONDecoder().decode(EntryFile.self, from: Data(bytes))
        } catch let refusal as AgentStore.Refusal {
            throw refusal
        } catch {
            throw AgentStore.Refusal(description: "it is not a scheduled toast's file")
        }
        guard file.format == format, file.version == version else {
            throw AgentStore.Refusal(description: "it is not version \(version) of \(format)")
        }
        try file.toast.checkRange()
        guard fileName(of: file.toast.id) == name else {
            throw AgentStore.Refusal(description: "it holds toast \"\(file.toast.id)\", whose file is another")
        }
        let rest = KeptEnvironment.split(file.toast.request.environment ?? [:]).rest
        return (file.toast, !rest.isEmpty)
    }
}

// MARK: - File names

extension ScheduleStore {
    /// The longest escaped id a file is named after; a longer one's file is named by its hash.
    private static let longestEscapedName = 200
    private static let upperHex = Array("0123456789ABCDEF".unicodeScalars)

    /// The name of the file that keeps the schedule of `id` in ``folder``: the id's UTF-8 bytes, each one that is not
    /// an ASCII letter, digit, `-` or `_` written `%XX` (`a/../b` is `a%2F%2E%2E%2Fb.json`), then `.json`. An id whose
    /// escaped form is longer than 200 bytes is named `~` and a 64-bit FNV-1a hash of its bytes instead (two ids of one
    /// hash are told apart when written: the second is refused, never written over the first). Never a path: no `/`,
    /// never `.` or `..`, at most 205 bytes.
    package static func fileName(of id: String) -> String {
        var escaped = ""
        for byte in id.utf8 {
            if isPlain(byte) {
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                escaped.unicodeScalars += ["%", upperHex[Int(byte >> 4)], upperHex[Int(byte & 0xF)]]
            }
            if escaped.utf8.count > longestEscapedName { break }
        }
        guard escaped.utf8.count <= longestEscapedName else {
            let hash = id.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
            let hex = String(hash, radix: 16)
            return "~" + String(repeating: "0", count: 16 - hex.count) + hex + ".json"
        }
        return escaped + ".json"
    }

    /// The id whose file is `name`: nil when `name` is not the name ``fileName(of:)`` gives an id, or is a hashed one
    /// (which does not tell its id).
    package static func id(ofFileName name: String) -> String? {
        guard name.hasSuffix(".json"), !name.hasPrefix("~") else { return nil }
        var bytes: [UInt8] = []
        var rest = Array(name.utf8.dropLast(5))[...]
        while let byte = rest.popFirst() {
            if byte == UInt8(ascii: "%") {
                guard rest.count >= 2, let high = hexDigit(rest.removeFirst()), let low = hexDigit(rest.removeFirst())
                else { return nil }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        guard let id = String(validating: bytes, as: UTF8.self), !id.isEmpty, fileName(of: id) == name else {
            return nil
        }
        return id
    }

    /// Whether `name` is the name of an entry's file (an id's, or a long id's hashed name): not a temporary file, a
    /// refused one or anything else a folder may hold.
    package static func isEntryFileName(_ name: String) -> Bool {
        if name.hasPrefix("~") {
            let hex = name.utf8.dropFirst().dropLast(5)
            return name.hasSuffix(".json") && name.utf8.count == 22
                && hex.allSatisfy {
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                        || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
                }
        }
        return id(ofFileName: name) != nil
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default: return false
        }
    }

    private static func hexDigit(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}
