// The errors of the testing helpers: each says what the test expected and what there was, so it fails the test
// with a reason instead of hanging it.

/// A testing helper's wait ended without what it waited for: the test's expectation was wrong, or the code under
/// test did not do what it should. The description says what was awaited and what there was.
public struct ToastTestingTimeout: Error, Sendable, CustomStringConvertible {
    /// What was awaited, and what there was instead.
    public var description: String

    /// Creates the error.
    public init(_ description: String) {
        self.description = description
    }
}

/// A testing helper was asked for something that is not there (an action a toast does not offer, a toast that is
/// not on screen). The description says what was asked for and what there is.
public struct ToastTestingMismatch: Error, Sendable, CustomStringConvertible {
    /// What was asked for, and what there is instead.
    public var description: String

    /// Creates the error.
    public init(_ description: String) {
        self.description = description
    }
}
