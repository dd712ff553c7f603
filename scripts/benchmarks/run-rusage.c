/*
 * run-rusage: runs a command and reports what the kernel accounted to it (wait4): peak RSS and CPU time.
 * Used by scripts/bench.sh for P4 (peak RSS of `toastkit send` vs `notify-send`) and P5 (CPU time of a process
 * holding a toast: --kill-after stops it with SIGTERM after S seconds).
 *
 * Build: gcc -O2 -o run-rusage run-rusage.c
 * Usage: run-rusage [--kill-after S] -- COMMAND [ARG...]
 * The command's standard output goes to /dev/null (only the figures are printed). Prints one JSON line: {"status":N,"maxrss_kib":N,"user_us":N,"sys_us":N,"cpu_us":N,"wall_s":X}; status is the
 * exit code, or 128+signal.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec spec;
    clock_gettime(CLOCK_MONOTONIC, &spec);
    return (double)spec.tv_sec + (double)spec.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    double kill_after = 0;
    int i = 1;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--kill-after") && i + 1 < argc) {
            kill_after = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else {
            break;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "usage: %s [--kill-after S] -- COMMAND [ARG...]\n", argv[0]);
        return 2;
    }
    double start = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        perror("run-rusage: fork");
        return 1;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, STDOUT_FILENO);
        execvp(argv[i], &argv[i]);
        perror("run-rusage: exec");
        _exit(127);
    }
    int status = 0;
    struct rusage usage;
    if (kill_after > 0) {
        for (;;) {
            pid_t done = wait4(pid, &status, WNOHANG, &usage);
            if (done == pid) break;
            if (now_s() - start >= kill_after) {
                kill(pid, SIGTERM);
                wait4(pid, &status, 0, &usage);
                break;
            }
            usleep(10000);
        }
    } else {
        wait4(pid, &status, 0, &usage);
    }
    double wall = now_s() - start;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    long user = usage.ru_utime.tv_sec * 1000000L + usage.ru_utime.tv_usec;
    long sys = usage.ru_stime.tv_sec * 1000000L + usage.ru_stime.tv_usec;
    printf("{\"status\":%d,\"maxrss_kib\":%ld,\"user_us\":%ld,\"sys_us\":%ld,\"cpu_us\":%ld,\"wall_s\":%.3f}\n", code,
           usage.ru_maxrss, user, sys, user + sys, wall);
    return 0;
}
