/*
 * raw-libdbus-server: the instant D-Bus server both benchmark clients are measured against.
 *
 * Owns a well-known name (default org.toastkit.BenchServer) and serves, at /bench, interface org.toastkit.Bench:
 *   Ping(u) -> u                          echoes its argument
 *   Notify(susssasa{sv}i) -> u            Notify-shaped; answers a counter (checks the signature only)
 * Single thread, plain `dbus_connection_read_write_dispatch` loop, answers at once. Runs until killed or the bus
 * goes away.
 *
 * Build: gcc -O2 -o raw-libdbus-server raw-libdbus-server.c $(pkg-config --cflags --libs dbus-1)
 * Usage: raw-libdbus-server [--address ADDR] [--name NAME]   (default address: DBUS_SESSION_BUS_ADDRESS)
 * Prints "ready NAME" on stdout once the name is owned.
 */
#include <dbus/dbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_INTERFACE "org.toastkit.Bench"
#define BENCH_PATH "/bench"

static dbus_uint32_t notify_counter;

static void die(const char *what, DBusError *error) {
    fprintf(stderr, "raw-libdbus-server: %s: %s\n", what, error && dbus_error_is_set(error) ? error->message : "failed");
    exit(1);
}

static DBusHandlerResult handle(DBusConnection *connection, DBusMessage *message, void *data) {
    (void)data;
    if (dbus_message_get_type(message) != DBUS_MESSAGE_TYPE_METHOD_CALL) return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    DBusMessage *reply = NULL;
    if (dbus_message_is_method_call(message, BENCH_INTERFACE, "Ping")) {
        dbus_uint32_t value = 0;
        if (dbus_message_get_args(message, NULL, DBUS_TYPE_UINT32, &value, DBUS_TYPE_INVALID)) {
            reply = dbus_message_new_method_return(message);
            if (reply) dbus_message_append_args(reply, DBUS_TYPE_UINT32, &value, DBUS_TYPE_INVALID);
        } else {
            reply = dbus_message_new_error(message, DBUS_ERROR_INVALID_ARGS, "Ping takes (u)");
        }
    } else if (dbus_message_is_method_call(message, BENCH_INTERFACE, "Notify")) {
        if (dbus_message_has_signature(message, "susssasa{sv}i")) {
            dbus_uint32_t id = ++notify_counter;
            reply = dbus_message_new_method_return(message);
            if (reply) dbus_message_append_args(reply, DBUS_TYPE_UINT32, &id, DBUS_TYPE_INVALID);
        } else {
            reply = dbus_message_new_error(message, DBUS_ERROR_INVALID_ARGS, "Notify takes (susssasa{sv}i)");
        }
    } else {
        return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    }
    if (!reply) return DBUS_HANDLER_RESULT_NEED_MEMORY;
    if (!dbus_message_get_no_reply(message)) dbus_connection_send(connection, reply, NULL);
    dbus_message_unref(reply);
    return DBUS_HANDLER_RESULT_HANDLED;
}

int main(int argc, char **argv) {
    const char *address = getenv("DBUS_SESSION_BUS_ADDRESS");
    const char *name = "org.toastkit.BenchServer";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--address") && i + 1 < argc) {
            address = argv[++i];
        } else if (!strcmp(argv[i], "--name") && i + 1 < argc) {
            name = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--address ADDR] [--name NAME]\n", argv[0]);
            return 2;
        }
    }
    if (!address || !*address) {
        fprintf(stderr, "raw-libdbus-server: no bus: set DBUS_SESSION_BUS_ADDRESS or pass --address\n");
        return 2;
    }

    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(address, &error);
    if (!connection) die("connect", &error);
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    if (!dbus_bus_register(connection, &error)) die("Hello", &error);

    DBusObjectPathVTable vtable = {.message_function = handle};
    if (!dbus_connection_try_register_object_path(connection, BENCH_PATH, &vtable, NULL, &error))
        die("register " BENCH_PATH, &error);
    int owned = dbus_bus_request_name(connection, name, DBUS_NAME_FLAG_DO_NOT_QUEUE, &error);
    if (owned != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) die("RequestName (is the name taken?)", &error);

    printf("ready %s\n", name);
    fflush(stdout);
    while (dbus_connection_read_write_dispatch(connection, -1)) {
    }
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return 0;
}
