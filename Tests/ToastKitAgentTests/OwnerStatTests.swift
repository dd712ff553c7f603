import Glibc
import Testing
import ToastKitAgent

/// How an agent taking the name tells that its owner is gone or going (`ToastAgent.isEnding(stat:)`): the fresh run
/// 18 race, where a SIGKILLed agent had closed its keeper's pipe but was not a zombie yet, pinned down without a race —
/// on real `/proc` lines of a live process and of a real zombie, and on the exiting flag in a line of its own.
@Suite struct OwnerStatTests {
    private func stat(of pid: pid_t) throws -> ArraySlice<UInt8> {
        let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        try #require(descriptor >= 0, "cannot open /proc/\(pid)/stat: errno \(errno)")
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 512)
        let count = read(descriptor, &bytes, bytes.count)
        try #require(count > 0)
        return bytes[..<count]
    }

    @Test func aLiveProcessIsNotEnding() throws {
        #expect(!ToastAgent.isEnding(stat: try stat(of: getpid())))
    }

    @Test func aZombieIsEnding() throws {
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { for argument in arguments { free(argument) } }
        #expect(posix_spawn(&pid, "/bin/true", nil, nil, arguments, environ) == 0)
        // Wait for its exit without reaping it (WNOWAIT): it stays a zombie until the waitpid below.
        var info = siginfo_t()
        #expect(waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == 0)
        #expect(ToastAgent.isEnding(stat: try stat(of: pid)), "a zombie (Z)")
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
    }

    @Test func theExitingFlagCountsAndTheNameMayHoldParentheses() {
        func line(_ text: String) -> ArraySlice<UInt8> { Array(text.utf8)[...] }
        // `pid (comm) state ppid pgrp session tty tpgid flags …`, with a name that has ") S " in it.
        let running = "4242 (toast) S 1 (x) S 1 4242 4242 0 -1 4194560 120 0 0 0"
        #expect(!ToastAgent.isEnding(stat: line(running)))
        let exiting = "4242 (toast) S 1 (x) R 1 4242 4242 0 -1 4194564 120 0 0 0"
        #expect(ToastAgent.isEnding(stat: line(exiting)), "PF_EXITING (0x4) set in the flags")
        #expect(ToastAgent.isEnding(stat: line("4242 (toast) X 1 4242 4242 0 -1 0")), "dead (X)")
        #expect(!ToastAgent.isEnding(stat: line("4242 (toast")), "cut short: says nothing")
        #expect(!ToastAgent.isEnding(stat: line("")))
    }
}
