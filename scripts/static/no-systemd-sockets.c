/*
 * Linked only into the fully static `toastkit` (scripts/build-cli.sh), never into the libraries or the tests.
 *
 * Debian's libdbus-1.a references two libsystemd functions, both from `_dbus_listen_systemd_sockets`, which a
 * D-Bus *server* calls for a "systemd:" listen address to take over sockets passed by socket activation. A client
 * never listens, and Debian ships no static libsystemd. These answer what libsystemd answers to a process that was
 * not socket-activated: no sockets were passed.
 */
#include <errno.h>
#include <sys/types.h>

int sd_listen_fds(int unset_environment) {
    (void)unset_environment;
    return 0;
}

int sd_is_socket(int fd, int family, int type, int listening) {
    (void)fd;
    (void)family;
    (void)type;
    (void)listening;
    return -ENOSYS;
}
