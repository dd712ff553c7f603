import Glibc

/// Text files of the system ToastKit reads to explain or find things — D-Bus service files, `/etc/passwd`, LXQt's
/// settings, a sound theme's `index.theme` — none of them the package's own (those are
/// ``ToastModel/PrivateFiles``'): read without trusting them.
package enum LocalFiles {
    /// At most `limit` bytes of the regular file at `path`, opened without blocking (a FIFO is not read); nil when it
    /// cannot be read.
    package static func text(of path: String, limit: Int) -> String? {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        var bytes = [UInt8](repeating: 0, count: limit)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, limit) }
        guard count >= 0 else { return nil }
        return String(decoding: bytes.prefix(count), as: UTF8.self)
    }
}
