/*
 * valgrind-sigsuspend-shim: lets Debian 12's valgrind 3.19 run Swift programs to the end (scripts/valgrind.sh).
 *
 * When an async `main` returns, libdispatch parks the main thread in `sigsuspend(&_dispatch_sigsuspend.mask)`, a
 * mask in read-only memory. valgrind 3.19's rt_sigsuspend wrapper edits the caller's mask in place (it removes
 * its own signal), so it faults: "VALGRIND INTERNAL ERROR: Valgrind received a signal 11", "sys_rt_sigsuspend" in
 * --trace-syscalls. This LD_PRELOAD shim passes a writable copy of the mask instead. Nothing else changes.
 *
 * Build: gcc -O2 -shared -fPIC -o valgrind-sigsuspend-shim.so valgrind-sigsuspend-shim.c
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}
