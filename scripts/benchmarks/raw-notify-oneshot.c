/*
 * raw-notify-oneshot: the floor of benchmark P1 (scripts/bench.sh): one Notify from a fresh process, then exit.
 *
 * Connects to the session bus (dbus_bus_get_private: Hello included), sends one
 * Notify("raw-notify-oneshot", 0, "", TITLE, BODY, [], {urgency: 1}, -1), waits for the id and exits 0 — what
 * `notify-send TITLE BODY` and `toastkit send TITLE BODY` do at the least. It does not even print the id.
 *
 * Build: gcc -O2 -o raw-notify-oneshot raw-notify-oneshot.c $(pkg-config --cflags --libs dbus-1)
 * Usage: raw-notify-oneshot TITLE [BODY]   (the bus is DBUS_SESSION_BUS_ADDRESS)
 */
#include <dbus/dbus.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s TITLE [BODY]\n", argv[0]);
        return 2;
    }
    const char *app = "raw-notify-oneshot", *icon = "", *summary = argv[1], *body = argc > 2 ? argv[2] : "";
    const char *urgency_key = "urgency";
    dbus_uint32_t replaces = 0;
    dbus_int32_t expire = -1;
    unsigned char urgency = 1;

    DBusError error;
    dbus_error_init(&error);
    DBusConnection *connection = dbus_bus_get_private(DBUS_BUS_SESSION, &error);
    if (!connection) goto failed;
    dbus_connection_set_exit_on_disconnect(connection, FALSE);

    DBusMessage *message = dbus_message_new_method_call(
        "org.freedesktop.Notifications", "/org/freedesktop/Notifications", "org.freedesktop.Notifications", "Notify");
    DBusMessageIter iter, array, entry, variant;
    dbus_message_iter_init_append(message, &iter);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &app);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_UINT32, &replaces);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &icon);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &summary);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &body);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "s", &array);
    dbus_message_iter_close_container(&iter, &array);
    dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{sv}", &array);
    dbus_message_iter_open_container(&array, DBUS_TYPE_DICT_ENTRY, NULL, &entry);
    dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &urgency_key);
    dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, "y", &variant);
    dbus_message_iter_append_basic(&variant, DBUS_TYPE_BYTE, &urgency);
    dbus_message_iter_close_container(&entry, &variant);
    dbus_message_iter_close_container(&array, &entry);
    dbus_message_iter_close_container(&iter, &array);
    dbus_message_iter_append_basic(&iter, DBUS_TYPE_INT32, &expire);

    DBusMessage *reply = dbus_connection_send_with_reply_and_block(connection, message, 25000, &error);
    dbus_message_unref(message);
    if (!reply) goto failed;
    dbus_uint32_t id = 0;
    if (!dbus_message_get_args(reply, &error, DBUS_TYPE_UINT32, &id, DBUS_TYPE_INVALID)) goto failed;
    dbus_message_unref(reply);
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return 0;

failed:
    fprintf(stderr, "raw-notify-oneshot: %s\n", error.message ? error.message : "failed");
    return 69;
}
