// CSpawn: the glibc calls the Glibc module hides (declared only with _GNU_SOURCE, or in headers it leaves out): the
// working folder of a program started with posix_spawn, so the agent can start an --on-action command in its sender's
// folder, and the closing of every other descriptor in it (glibc 2.34), so a user's program started by root (`--user`)
// holds none of root's; and a descriptor that tells when another process ends (pidfd_open, glibc 2.36), for `toastkit run --pid`, the
// ends of the agent's --on-action commands and of its sound players and reply prompts; and a pipe whose ends are
// close-on-exec from the start (pipe2), so a program another thread starts meanwhile never inherits them; and the
// process's auxiliary vector (getauxval), so a statically linked `toastkit` knows it has no dynamic loader and loads no
// library. Part of libc itself: nothing to link.
#ifndef TOASTKIT_CSPAWN_H
#define TOASTKIT_CSPAWN_H
#include <spawn.h>
#include <sys/auxv.h>
#include <sys/types.h>

int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *__restrict actions, const char *__restrict path);
int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
int pidfd_open(pid_t pid, unsigned int flags);
int pipe2(int pipefd[2], int flags);

#endif
