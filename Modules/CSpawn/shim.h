// CSpawn: the one glibc call the Glibc module hides (it is declared only with _GNU_SOURCE): the working folder of a
// program started with posix_spawn, so the agent can start an --on-action command in its sender's folder. Part of
// libc itself: nothing to link.
#ifndef TOASTKIT_CSPAWN_H
#define TOASTKIT_CSPAWN_H
#include <spawn.h>

int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *__restrict actions, const char *__restrict path);

#endif
