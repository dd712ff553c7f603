// The columns of the conformance matrix: Debian 12's nine servers from the host, and the servers of 2025-2026 from the
// Debian 13 chroot (issue 41), each named as the table and CONFORMANCE_SERVERS name it.
import TestSupport

/// One column of the matrix: a server and where its build comes from.
enum ConformanceServer: Hashable, Sendable, CustomStringConvertible {
    /// One of Debian 12's servers, installed on the host.
    case debian12(NotificationServerKind)
    /// A server of 2025-2026 from the Debian 13 chroot (`scripts/modern-chroot.sh`).
    case modern(ModernServer)

    /// Every column, in table order: Debian 12's, then the modern ones.
    static let all: [ConformanceServer] =
        NotificationServerKind.allCases.map { .debian12($0) } + ModernServer.allCases.map { .modern($0) }

    /// The column's name (`plasma`, `plasma-6.3`), as `CONFORMANCE_SERVERS` takes it.
    var name: String {
        switch self {
        case .debian12(let kind): kind.rawValue
        case .modern(let server): server.rawValue
        }
    }

    var description: String { name }

    /// The Debian 12 server it is driven like (itself for Debian 12's).
    var kind: NotificationServerKind {
        switch self {
        case .debian12(let kind): kind
        case .modern(let server): server.kind
        }
    }

    /// The modern server, or nil for Debian 12's.
    var modern: ModernServer? {
        if case .modern(let server) = self { server } else { nil }
    }

    /// Starts a fresh desktop with this server.
    func startEnvironment() async throws -> NotificationEnvironment {
        switch self {
        case .debian12(let kind): try await NotificationEnvironment.start(server: kind)
        case .modern(let server): try await NotificationEnvironment.start(modern: server)
        }
    }
}
