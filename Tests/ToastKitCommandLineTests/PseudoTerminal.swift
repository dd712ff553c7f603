// A pseudo-terminal for the tests that need a terminal: its master end and the path of its far end.
import Glibc
import Testing

/// Opens a new pseudo-terminal: its master descriptor (the caller closes it) and its far end's path (`/dev/pts/N`).
/// posix_openpt and ptsname need _XOPEN_SOURCE, which the Glibc module leaves out: the same, by hand.
func openPseudoTerminal() throws -> (master: Int32, path: String) {
    let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
    try #require(master >= 0, "\(String(cString: strerror(errno)))")
    var unlock: Int32 = 0
    var number: UInt32 = 0
    guard ioctl(master, 0x4004_5431 /* TIOCSPTLCK */, &unlock) == 0,
        ioctl(master, 0x8004_5430 /* TIOCGPTN */, &number) == 0
    else {
        close(master)
        throw PseudoTerminalError()
    }
    return (master, "/dev/pts/\(number)")
}

/// The kernel would not unlock or name a new pseudo-terminal.
struct PseudoTerminalError: Error, CustomStringConvertible {
    var description: String { "cannot unlock or name a new pseudo-terminal: \(String(cString: strerror(errno)))" }
}
