/*
 * instant-notifications-server: a notification server that draws nothing and answers at once, for the client-cost
 * benchmarks of scripts/bench.sh (NOTES.md §7: with a drawing server, drawing dominates every figure).
 *
 * Owns org.freedesktop.Notifications and serves, at /org/freedesktop/Notifications:
 *   org.freedesktop.Notifications
 *     Notify(susssasa{sv}i) -> u        a counter (or replaces_id when it is not 0); remembers the caller
 *     CloseNotification(u)              emits NotificationClosed(id, 3) to the Notify caller, as dunst does
 *     GetCapabilities() -> as           actions body body-hyperlinks body-markup icon-static persistence
 *     GetServerInformation() -> ssss    instant-notifications-server, toastkit, 1.0, 1.2
 *   org.toastkit.Bench (for P3, the action latency, and for scripts/bench-dbus.sh)
 *     EmitAction(us) -> t               emits ActionInvoked(id, key) to the caller of Notify(id) and answers the
 *                                       CLOCK_MONOTONIC time in ns taken just before the signal was queued
 *     Stats() -> tt                     (Notify calls, CloseNotification calls) so far
 *     Last() -> (tus)                   the last Notify: when it arrived (CLOCK_MONOTONIC ns), its id, its summary
 *     Ping(u) -> u                      echoes its argument
 *     Notify(susssasa{sv}i) -> u        the same as the Notifications interface's
 * The same object is also served at /bench (scripts/bench-dbus.sh's clients call org.toastkit.Bench there).
 *   org.freedesktop.DBus.Introspectable.Introspect() -> s   (gdbus call reads the signatures from it)
 * Signals go only to the connection that called Notify (dunst's behavior; NOTES.md P2). Single thread, plain
 * `dbus_connection_read_write_dispatch` loop. Runs until killed or the bus goes away.
 *
 * Build: gcc -O2 -o instant-notifications-server instant-notifications-server.c $(pkg-config --cflags --libs dbus-1)
 * Usage: instant-notifications-server [--address ADDR] [--name NAME]   (default address: DBUS_SESSION_BUS_ADDRESS)
 * Prints "ready NAME" on stdout once the name is owned.
 */
#include <dbus/dbus.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOTIFICATIONS_INTERFACE "org.freedesktop.Notifications"
#define NOTIFICATIONS_PATH "/org/freedesktop/Notifications"
#define BENCH_INTERFACE "org.toastkit.Bench"
#define SENDER_SLOTS 65536 /* the Notify caller of the last SENDER_SLOTS ids */

static dbus_uint32_t next_id;
static dbus_uint64_t notify_calls, close_calls;
/* The last Notify (benchmark P6: when the final text of a replace storm reached the server). */
static dbus_uint64_t last_ns;
static dbus_uint32_t last_id;
static char *last_summary;
static char *senders[SENDER_SLOTS];

static void die(const char *what, DBusError *error) {
    fprintf(stderr, "instant-notifications-server: %s: %s\n", what,
            error && dbus_error_is_set(error) ? error->message : "failed");
    exit(1);
}

static dbus_uint64_t monotonic_ns(void) {
    struct timespec spec;
    clock_gettime(CLOCK_MONOTONIC, &spec);
    return (dbus_uint64_t)spec.tv_sec * 1000000000u + (dbus_uint64_t)spec.tv_nsec;
}

static void remember_sender(dbus_uint32_t id, const char *sender) {
    char **slot = &senders[id % SENDER_SLOTS];
    if (*slot && sender && !strcmp(*slot, sender)) return;
    free(*slot);
    *slot = sender ? strdup(sender) : NULL;
}

static const char *sender_of(dbus_uint32_t id) { return senders[id % SENDER_SLOTS]; }

/* Queues a signal of the Notifications interface for `destination` (broadcast when NULL). */
static int emit(DBusConnection *connection, const char *destination, const char *member, int second_type,
                const void *second, dbus_uint32_t id) {
    DBusMessage *signal = dbus_message_new_signal(NOTIFICATIONS_PATH, NOTIFICATIONS_INTERFACE, member);
    if (!signal) return 0;
    if ((destination && !dbus_message_set_destination(signal, destination)) ||
        !dbus_message_append_args(signal, DBUS_TYPE_UINT32, &id, second_type, second, DBUS_TYPE_INVALID)) {
        dbus_message_unref(signal);
        return 0;
    }
    int sent = dbus_connection_send(connection, signal, NULL);
    dbus_message_unref(signal);
    return sent;
}

static DBusMessage *handle_notify(DBusMessage *message) {
    const char *app = NULL, *icon = NULL, *summary = NULL, *body = NULL;
    dbus_uint32_t replaces = 0;
    DBusMessageIter iter;
    if (!dbus_message_has_signature(message, "susssasa{sv}i") || !dbus_message_iter_init(message, &iter))
        return dbus_message_new_error(message, DBUS_ERROR_INVALID_ARGS, "Notify takes (susssasa{sv}i)");
    dbus_message_iter_get_basic(&iter, &app);
    dbus_message_iter_next(&iter);
    dbus_message_iter_get_basic(&iter, &replaces);
    dbus_message_iter_next(&iter);
    dbus_message_iter_get_basic(&iter, &icon);
    dbus_message_iter_next(&iter);
    dbus_message_iter_get_basic(&iter, &summary);
    dbus_message_iter_next(&iter);
    dbus_message_iter_get_basic(&iter, &body);
    notify_calls++;
    dbus_uint32_t id = replaces;
    if (id == 0) {
        if (++next_id == 0) next_id = 1;
        id = next_id;
    }
    remember_sender(id, dbus_message_get_sender(message));
    last_ns = monotonic_ns();
    last_id = id;
    free(last_summary);
    last_summary = strdup(summary ? summary : "");
    DBusMessage *reply = dbus_message_new_method_return(message);
    if (reply && !dbus_message_append_args(reply, DBUS_TYPE_UINT32, &id, DBUS_TYPE_INVALID)) {
        dbus_message_unref(reply);
        reply = NULL;
    }
    return reply;
}

static DBusMessage *handle_capabilities(DBusMessage *message) {
    static const char *capabilities[] = {"actions", "body", "body-hyperlinks", "body-markup", "icon-static",
                                         "persistence"};
    const char **list = capabilities;
    DBusMessage *reply = dbus_message_new_method_return(message);
    if (reply && !dbus_message_append_args(reply, DBUS_TYPE_ARRAY, DBUS_TYPE_STRING, &list,
                                           (int)(sizeof capabilities / sizeof *capabilities), DBUS_TYPE_INVALID)) {
        dbus_message_unref(reply);
        reply = NULL;
    }
    return reply;
}

static DBusMessage *handle_information(DBusMessage *message) {
    const char *name = "instant-notifications-server", *vendor = "toastkit", *version = "1.0", *spec = "1.2";
    DBusMessage *reply = dbus_message_new_method_return(message);
    if (reply && !dbus_message_append_args(reply, DBUS_TYPE_STRING, &name, DBUS_TYPE_STRING, &vendor,
                                           DBUS_TYPE_STRING, &version, DBUS_TYPE_STRING, &spec, DBUS_TYPE_INVALID)) {
        dbus_message_unref(reply);
        reply = NULL;
    }
    return reply;
}

static const char introspection[] =
    "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"\n"
    " \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">\n"
    "<node>\n"
    " <interface name=\"org.freedesktop.Notifications\">\n"
    "  <method name=\"Notify\"><arg type=\"s\" direction=\"in\"/><arg type=\"u\" direction=\"in\"/>"
    "<arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/>"
    "<arg type=\"as\" direction=\"in\"/><arg type=\"a{sv}\" direction=\"in\"/><arg type=\"i\" direction=\"in\"/>"
    "<arg type=\"u\" direction=\"out\"/></method>\n"
    "  <method name=\"CloseNotification\"><arg type=\"u\" direction=\"in\"/></method>\n"
    "  <method name=\"GetCapabilities\"><arg type=\"as\" direction=\"out\"/></method>\n"
    "  <method name=\"GetServerInformation\"><arg type=\"s\" direction=\"out\"/><arg type=\"s\" direction=\"out\"/>"
    "<arg type=\"s\" direction=\"out\"/><arg type=\"s\" direction=\"out\"/></method>\n"
    "  <signal name=\"NotificationClosed\"><arg type=\"u\"/><arg type=\"u\"/></signal>\n"
    "  <signal name=\"ActionInvoked\"><arg type=\"u\"/><arg type=\"s\"/></signal>\n"
    " </interface>\n"
    " <interface name=\"org.toastkit.Bench\">\n"
    "  <method name=\"EmitAction\"><arg type=\"u\" direction=\"in\"/><arg type=\"s\" direction=\"in\"/>"
    "<arg type=\"t\" direction=\"out\"/></method>\n"
    "  <method name=\"Stats\"><arg type=\"t\" direction=\"out\"/><arg type=\"t\" direction=\"out\"/></method>\n"
    "  <method name=\"Last\"><arg type=\"t\" direction=\"out\"/><arg type=\"u\" direction=\"out\"/>"
    "<arg type=\"s\" direction=\"out\"/></method>\n"
    "  <method name=\"Ping\"><arg type=\"u\" direction=\"in\"/><arg type=\"u\" direction=\"out\"/></method>\n"
    " </interface>\n"
    "</node>\n";

static DBusHandlerResult handle(DBusConnection *connection, DBusMessage *message, void *data) {
    (void)data;
    if (dbus_message_get_type(message) != DBUS_MESSAGE_TYPE_METHOD_CALL) return DBUS_HANDLER_RESULT_NOT_YET_HANDLED;
    DBusMessage *reply = NULL;
    if (dbus_message_is_method_call(message, NOTIFICATIONS_INTERFACE, "Notify") ||
        dbus_message_is_method_call(message, BENCH_INTERFACE, "Notify")) {
        reply = handle_notify(message);
    } else if (dbus_message_is_method_call(message, BENCH_INTERFACE, "Ping")) {
        dbus_uint32_t value = 0;
        if (dbus_message_get_args(message, NULL, DBUS_TYPE_UINT32, &value, DBUS_TYPE_INVALID)) {
            reply = dbus_message_new_method_return(message);
            if (reply) dbus_message_append_args(reply, DBUS_TYPE_UINT32, &value, DBUS_TYPE_INVALID);
        } else {
            reply = dbus_message_new_error(message, DBUS_ERROR_INVALID_ARGS, "Ping takes (u)");
        }
    } else if (dbus_message_is_method_call(message, NOTIFICATIONS_INTERFACE, "CloseNotification")) {
        dbus_uint32_t id = 0;
        if (dbus_message_get_args(message, NULL, DBUS_TYPE_UINT32, &id, DBUS_TYPE_INVALID)) {
            close_calls++;
            dbus_uint32_t reason = 3;
            const char *destination = sender_of(id) ? sender_of(id) : dbus_message_get_sender(message);
            reply = dbus_message_new_method_return(message);
            if (reply) emit(connection, destination, "NotificationClosed", DBUS_TYPE_UINT32, &reason, id);
        } else {
            reply = dbus_message_new_error(message, DBUS_ERROR_INVALID_ARGS, "CloseNotification takes (u)");
        }
    } else if (dbus_message_is_method_call(message, NOTIFICATIONS_INTERFACE, "GetCapabilities")) {
        reply = handle_capabilities(message);
    } else if (dbus_message_is_method_call(message, NOTIFICATIONS_INTERFACE, "GetServerInformation")) {
        reply = handle_information(message);
    } else if (dbus_message_is_method_call(message, BENCH_INTERFACE, "EmitAction")) {
        dbus_uint32_t id = 0;
        const char *key = NULL;
        if (dbus_message_get_args(message, NULL, DBUS_TYPE_UINT32, &id, DBUS_TYPE_STRING, &key, DBUS_TYPE_INVALID)) {
            reply = dbus_message_new_method_return(message);
            dbus_uint64_t stamp = monotonic_ns();
            if (reply && emit(connection, sender_of(id), "ActionInvoked", DBUS_TYPE_STRING, &key, id)) {
                dbus_connection_flush(connection); /* the signal leaves before the reply is even built */
                dbus_message_append_args(reply, DBUS_TYPE_UINT64, &stamp, DBUS_TYPE_INVALID);
            } else if (reply) {
                dbus_message_unref(reply);
                reply = NULL;
            }
        } else {
            reply = dbus_message_new_error(message, DBUS_ERROR_INVALID_ARGS, "EmitAction takes (us)");
        }
    } else if (dbus_message_is_method_call(message, "org.freedesktop.DBus.Introspectable", "Introspect")) {
        const char *xml = introspection;
        reply = dbus_message_new_method_return(message);
        if (reply) dbus_message_append_args(reply, DBUS_TYPE_STRING, &xml, DBUS_TYPE_INVALID);
    } else if (dbus_message_is_method_call(message, BENCH_INTERFACE, "Last")) {
        const char *summary = last_summary ? last_summary : "";
        reply = dbus_message_new_method_return(message);
        if (reply)
            dbus_message_append_args(reply, DBUS_TYPE_UINT64, &last_ns, DBUS_TYPE_UINT32, &last_id, DBUS_TYPE_STRING,
                                     &summary, DBUS_TYPE_INVALID);
    } else if (dbus_message_is_method_call(message, BENCH_INTERFACE, "Stats")) {
        reply = dbus_message_new_method_return(message);
        if (reply)
            dbus_message_append_args(reply, DBUS_TYPE_UINT64, &notify_calls, DBUS_TYPE_UINT64, &close_calls,
                                     DBUS_TYPE_INVALID);
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
    const char *name = "org.freedesktop.Notifications";
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
        fprintf(stderr, "instant-notifications-server: no bus: set DBUS_SESSION_BUS_ADDRESS or pass --address\n");
        return 2;
    }

    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_connection_open_private(address, &error);
    if (!connection) die("connect", &error);
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    if (!dbus_bus_register(connection, &error)) die("Hello", &error);

    DBusObjectPathVTable vtable = {.message_function = handle};
    if (!dbus_connection_try_register_object_path(connection, NOTIFICATIONS_PATH, &vtable, NULL, &error))
        die("register " NOTIFICATIONS_PATH, &error);
    if (!dbus_connection_try_register_object_path(connection, "/bench", &vtable, NULL, &error))
        die("register /bench", &error);
    int owned = dbus_bus_request_name(connection, name, DBUS_NAME_FLAG_DO_NOT_QUEUE, &error);
    if (owned != DBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) die("RequestName (is the name taken?)", &error);

    printf("ready %s\n", name);
    fflush(stdout);
    while (dbus_connection_read_write_dispatch(connection, -1)) {
    }
    for (int i = 0; i < SENDER_SLOTS; i++) free(senders[i]);
    free(last_summary);
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return 0;
}
