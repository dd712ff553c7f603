public import FoundationEssentials

/// Where toasts kept with ``ToastAction/later`` are stored so they survive a restart (M6).
///
/// The center calls the store one operation at a time, never while holding its lock. A store must not lose
/// data silently: when what it holds cannot be read, it sets it aside and throws ``LaterStoreProblem``.
public protocol LaterStore: Sendable {
    /// Reads every kept toast, oldest first. An absent store is empty.
    func load() throws(LaterStoreProblem) -> [ToastLaterRecord]
    /// Replaces the kept toasts with `records`.
    func save(_ records: [ToastLaterRecord]) throws(LaterStoreProblem)
    /// Reads, changes and writes the kept toasts as one step: a store shared between processes
    /// (``FileLaterStore``) lets no one write in between. The default loads, calls `body`, and saves when
    /// `body` changed the records.
    func update<T>(_ body: (inout [ToastLaterRecord]) throws(LaterStoreProblem) -> T) throws(LaterStoreProblem) -> T
}

extension LaterStore {
    /// Loads, calls `body`, and saves when `body` changed the records.
    public func update<T>(_ body: (inout [ToastLaterRecord]) throws(LaterStoreProblem) -> T) throws(LaterStoreProblem)
        -> T
    {
        let before = try load()
        var records = before
        let result = try body(&records)
        if records != before { try save(records) }
        return result
    }
}

/// A problem with the store of kept toasts. Reported as ``ToastEvent/laterStoreProblem(_:)``; never a crash.
public struct LaterStoreProblem: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The stored data is not valid; it was set aside (see ``LaterStoreProblem/setAsideAt``).
        case corrupt
        /// The store could not be read.
        case unreadable
        /// The store could not be written.
        case unwritable
    }

    /// What went wrong.
    public var kind: Kind
    /// The store's location.
    public var location: URL
    /// Where the unreadable data was moved, if it could be moved; `nil` means it was left in place (and the
    /// center will not overwrite it).
    public var setAsideAt: URL?
    /// The underlying error, as text.
    public var detail: String

    /// Creates a problem.
    public init(kind: Kind, location: URL, setAsideAt: URL? = nil, detail: String) {
        self.kind = kind
        self.location = location
        self.setAsideAt = setAsideAt
        self.detail = detail
    }

    /// A human-readable description.
    public var description: String {
        var text = "later store \(location.path) is \(kind.rawValue): \(detail)"
        if let setAsideAt { text += "; set aside at \(setAsideAt.path)" }
        return text
    }
}
