/*
 * raw-libdbus-client: the C baseline for the DBus package's benchmark (Sources/DBusBenchmark).
 *
 * Makes the same calls as `dbus-benchmark --server external` and prints the same figures in the same format:
 *   sequential: N calls, one after another (dbus_connection_send_with_reply_and_block), calls/s, median and p99
 *               latency;
 *   pipelined:  N calls with up to W outstanding (dbus_connection_send_with_reply + dbus_pending_call_set_notify,
 *               I/O and dispatch driven by dbus_connection_read_write_dispatch), calls/s.
 * Each call builds a fresh message and checks its reply (Ping echoes its u argument; Notify answers a u).
 * cpu µs/call is this process's user+system time (getrusage) per call.
 *
 * --method replace (benchmark P6, the replace storm): one freedesktop Notify, then N Notify calls that replace it
 *   (replaces_id = its id, summary "Replace i"), up to W outstanding; reports the seconds until the last reply, when
 *   the server has the final text. The C loop sends every replacement: the floor for "send them all".
 *
 * Build: gcc -O2 -o raw-libdbus-client raw-libdbus-client.c $(pkg-config --cflags --libs dbus-1)
 * Usage: raw-libdbus-client [--address ADDR] [--destination NAME] [--calls N] [--window W] [--warmup N]
 *                           [--method ping|notify] [--json]
 */
#include <dbus/dbus.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define BENCH_INTERFACE "org.toastkit.Bench"
#define BENCH_PATH "/bench"
#define CALL_TIMEOUT_MS 25000

static DBusConnection *connection;
static const char *destination = "org.toastkit.BenchServer";
static int notify_method;
/* --method freedesktop-notify: the real interface (benchmark P2's C peer), as toastkit-benchmark's raw mode calls it. */
static int freedesktop;
/* --method replace: replace one notification N times (P6). */
static int replace_storm;
static dbus_uint32_t replaced_id;

static double now_us(void) {
    struct timespec spec;
    clock_gettime(CLOCK_MONOTONIC, &spec);
    return (double)spec.tv_sec * 1e6 + (double)spec.tv_nsec / 1e3;
}

static double cpu_us(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 +
           (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "raw-libdbus-client: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static void append_variant_dict_entry(DBusMessageIter *dict, const char *key, int type, const char *signature,
                                      const void *value) {
    DBusMessageIter entry, variant;
    if (!dbus_message_iter_open_container(dict, DBUS_TYPE_DICT_ENTRY, NULL, &entry) ||
        !dbus_message_iter_append_basic(&entry, DBUS_TYPE_STRING, &key) ||
        !dbus_message_iter_open_container(&entry, DBUS_TYPE_VARIANT, signature, &variant) ||
        !dbus_message_iter_append_basic(&variant, type, value) ||
        !dbus_message_iter_close_container(&entry, &variant) || !dbus_message_iter_close_container(dict, &entry))
        fail("out of memory", NULL);
}

/* A fresh call message: Ping(value); Notify with the same arguments as the Swift DBus benchmark; or (freedesktop)
 * Notify("toastkit-benchmark", 0, "", "Benchmark N", "A toast from the benchmark", [], {urgency: 1}, 4000) to
 * org.freedesktop.Notifications, as toastkit-benchmark's raw mode sends it. */
static DBusMessage *make_call(dbus_uint32_t value) {
    DBusMessage *message = freedesktop
        ? dbus_message_new_method_call(destination, "/org/freedesktop/Notifications", "org.freedesktop.Notifications",
                                       "Notify")
        : dbus_message_new_method_call(destination, BENCH_PATH, BENCH_INTERFACE, notify_method ? "Notify" : "Ping");
    if (!message) fail("out of memory", NULL);
    if (!notify_method) {
        if (!dbus_message_append_args(message, DBUS_TYPE_UINT32, &value, DBUS_TYPE_INVALID)) fail("out of memory", NULL);
        return message;
    }
    char summary_buffer[32];
    snprintf(summary_buffer, sizeof summary_buffer, replace_storm ? "Replace %u" : "Benchmark %u", (unsigned)value);
    const char *app = freedesktop ? "toastkit-benchmark" : "dbus-benchmark", *icon = "";
    const char *summary = freedesktop ? summary_buffer : "Benchmark";
    const char *body = freedesktop ? "A toast from the benchmark" : "A Notify-shaped call";
    const char *category = "bench";
    dbus_uint32_t replaces = replace_storm ? replaced_id : freedesktop ? 0 : value;
    dbus_int32_t expire = freedesktop ? 4000 : -1;
    unsigned char urgency = 1;
    DBusMessageIter iter, array;
    dbus_message_iter_init_append(message, &iter);
    if (!dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &app) ||
        !dbus_message_iter_append_basic(&iter, DBUS_TYPE_UINT32, &replaces) ||
        !dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &icon) ||
        !dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &summary) ||
        !dbus_message_iter_append_basic(&iter, DBUS_TYPE_STRING, &body) ||
        !dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "s", &array) ||
        !dbus_message_iter_close_container(&iter, &array) ||
        !dbus_message_iter_open_container(&iter, DBUS_TYPE_ARRAY, "{sv}", &array))
        fail("out of memory", NULL);
    append_variant_dict_entry(&array, "urgency", DBUS_TYPE_BYTE, "y", &urgency);
    if (!freedesktop) append_variant_dict_entry(&array, "category", DBUS_TYPE_STRING, "s", &category);
    if (!dbus_message_iter_close_container(&iter, &array) ||
        !dbus_message_iter_append_basic(&iter, DBUS_TYPE_INT32, &expire))
        fail("out of memory", NULL);
    return message;
}

/* Checks a reply: a method return whose single u is `value` (Ping) or anything (Notify). */
static void check_reply(DBusMessage *reply, dbus_uint32_t value) {
    if (dbus_message_get_type(reply) == DBUS_MESSAGE_TYPE_ERROR) {
        const char *text = "";
        dbus_message_get_args(reply, NULL, DBUS_TYPE_STRING, &text, DBUS_TYPE_INVALID);
        fail(dbus_message_get_error_name(reply), text);
    }
    dbus_uint32_t answer = 0;
    if (!dbus_message_get_args(reply, NULL, DBUS_TYPE_UINT32, &answer, DBUS_TYPE_INVALID))
        fail("reply is not (u)", dbus_message_get_signature(reply));
    if (!notify_method && answer != value) fail("Ping answered the wrong value", NULL);
    if (freedesktop && answer == 0) fail("Notify answered id 0", NULL);
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted values. */
static double percentile(const double *sorted, int count, double q) {
    int rank = (int)((q * count) + 0.999999999);
    if (rank < 1) rank = 1;
    if (rank > count) rank = count;
    return sorted[rank - 1];
}

typedef struct {
    double calls_per_s, median_us, p99_us, cpu_us_per_call;
} Figures;

static Figures run_sequential(int calls, double *latencies) {
    DBusError error;
    dbus_error_init(&error);
    double cpu0 = cpu_us(), t0 = now_us();
    for (int i = 0; i < calls; i++) {
        double start = now_us();
        DBusMessage *message = make_call((dbus_uint32_t)i);
        DBusMessage *reply = dbus_connection_send_with_reply_and_block(connection, message, CALL_TIMEOUT_MS, &error);
        dbus_message_unref(message);
        if (!reply) fail(error.name, error.message);
        check_reply(reply, (dbus_uint32_t)i);
        dbus_message_unref(reply);
        if (latencies) latencies[i] = now_us() - start;
    }
    double elapsed = now_us() - t0, cpu = cpu_us() - cpu0;
    Figures figures = {calls / (elapsed / 1e6), 0, 0, cpu / calls};
    if (latencies) {
        qsort(latencies, (size_t)calls, sizeof *latencies, compare_doubles);
        figures.median_us = percentile(latencies, calls, 0.5);
        figures.p99_us = percentile(latencies, calls, 0.99);
    }
    return figures;
}

static int outstanding, completed;

static void on_reply(DBusPendingCall *pending, void *data) {
    DBusMessage *reply = dbus_pending_call_steal_reply(pending);
    if (!reply) fail("no reply", NULL);
    check_reply(reply, (dbus_uint32_t)(uintptr_t)data);
    dbus_message_unref(reply);
    dbus_pending_call_unref(pending);
    outstanding--;
    completed++;
}

static Figures run_pipelined(int calls, int window) {
    outstanding = 0;
    completed = 0;
    int sent = 0;
    double cpu0 = cpu_us(), t0 = now_us();
    while (completed < calls) {
        while (outstanding < window && sent < calls) {
            DBusMessage *message = make_call((dbus_uint32_t)sent);
            DBusPendingCall *pending = NULL;
            if (!dbus_connection_send_with_reply(connection, message, &pending, CALL_TIMEOUT_MS) || !pending)
                fail("send_with_reply failed (disconnected?)", NULL);
            dbus_message_unref(message);
            outstanding++;
            if (!dbus_pending_call_set_notify(pending, on_reply, (void *)(uintptr_t)sent, NULL))
                fail("out of memory", NULL);
            if (dbus_pending_call_get_completed(pending)) on_reply(pending, (void *)(uintptr_t)sent);
            sent++;
        }
        if (!dbus_connection_read_write_dispatch(connection, -1)) fail("disconnected", NULL);
    }
    double elapsed = now_us() - t0, cpu = cpu_us() - cpu0;
    Figures figures = {calls / (elapsed / 1e6), 0, 0, cpu / calls};
    return figures;
}

int main(int argc, char **argv) {
    const char *address = getenv("DBUS_SESSION_BUS_ADDRESS");
    int calls = 10000, window = 64, warmup = 1000, json = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(arg, "--json")) {
            json = 1;
        } else if (next && !strcmp(arg, "--address")) {
            address = next, i++;
        } else if (next && !strcmp(arg, "--destination")) {
            destination = next, i++;
        } else if (next && !strcmp(arg, "--calls")) {
            calls = atoi(next), i++;
        } else if (next && !strcmp(arg, "--window")) {
            window = atoi(next), i++;
        } else if (next && !strcmp(arg, "--warmup")) {
            warmup = atoi(next), i++;
        } else if (next && !strcmp(arg, "--method")) {
            if (!strcmp(next, "notify")) notify_method = 1;
            else if (!strcmp(next, "freedesktop-notify") || !strcmp(next, "replace")) {
                notify_method = freedesktop = 1;
                replace_storm = !strcmp(next, "replace");
                destination = "org.freedesktop.Notifications";
            } else if (strcmp(next, "ping")) fail("--method takes ping, notify, freedesktop-notify or replace", next);
            i++;
        } else {
            fprintf(stderr,
                    "usage: %s [--address ADDR] [--destination NAME] [--calls N] [--window W] [--warmup N] "
                    "[--method ping|notify|freedesktop-notify|replace] [--json]\n",
                    argv[0]);
            return 2;
        }
    }
    if (calls < 1 || window < 1 || warmup < 0) fail("--calls and --window must be positive", NULL);
    if (!address || !*address) fail("no bus: set DBUS_SESSION_BUS_ADDRESS or pass --address", NULL);

    DBusError error;
    dbus_error_init(&error);
    connection = dbus_connection_open_private(address, &error);
    if (!connection) fail(error.name, error.message);
    dbus_connection_set_exit_on_disconnect(connection, FALSE);
    if (!dbus_bus_register(connection, &error)) fail(error.name, error.message);

    if (replace_storm) {
        /* The notification to replace, then the storm: every replacement sent, the last reply awaited. */
        DBusMessage *first = make_call(0), *reply;
        reply = dbus_connection_send_with_reply_and_block(connection, first, CALL_TIMEOUT_MS, &error);
        dbus_message_unref(first);
        if (!reply) fail(error.name, error.message);
        if (!dbus_message_get_args(reply, NULL, DBUS_TYPE_UINT32, &replaced_id, DBUS_TYPE_INVALID)) fail("no id", NULL);
        dbus_message_unref(reply);
        if (warmup > 0) run_pipelined(warmup, window);
        double t0 = now_us();
        Figures storm = run_pipelined(calls, window);
        double seconds = (now_us() - t0) / 1e6;
        printf("{\"client\":\"c\",\"method\":\"replace\",\"calls\":%d,\"window\":%d,\"final_ms\":%.1f,"
               "\"notify_calls\":%d,\"cpu_us_per_call\":%.1f}\n",
               calls, window, seconds * 1000, calls, storm.cpu_us_per_call);
        dbus_connection_close(connection);
        dbus_connection_unref(connection);
        return 0;
    }
    if (warmup > 0) {
        run_sequential(warmup, NULL);
        run_pipelined(warmup, window);
    }
    double *latencies = malloc(sizeof *latencies * (size_t)calls);
    if (!latencies) fail("out of memory", NULL);
    Figures sequential = run_sequential(calls, latencies);
    Figures pipelined = run_pipelined(calls, window);
    const char *method = notify_method ? "Notify" : "Ping";

    if (json) {
        printf("{\"client\":\"c\",\"server\":\"%s\",\"method\":\"%s\",\"calls\":%d,\"window\":%d,\"warmup\":%d,"
               "\"sequential\":{\"calls_per_s\":%.1f,\"median_us\":%.1f,\"p99_us\":%.1f,\"cpu_us_per_call\":%.1f},"
               "\"pipelined\":{\"calls_per_s\":%.1f,\"cpu_us_per_call\":%.1f}}\n",
               destination, method, calls, window, warmup, sequential.calls_per_s, sequential.median_us,
               sequential.p99_us, sequential.cpu_us_per_call, pipelined.calls_per_s, pipelined.cpu_us_per_call);
    } else {
        printf("client       C (raw libdbus)\n");
        printf("server       %s\n", destination);
        printf("method       %s\n", notify_method ? "Notify(susssasa{sv}i) -> u" : "Ping(u) -> u");
        printf("calls        %d (warm-up %d)\n", calls, warmup);
        printf("window       %d\n\n", window);
        printf("mode            calls      calls/s    median µs       p99 µs    cpu µs/call\n");
        printf("%-12s %8d %12.1f %12.1f %12.1f %14.1f\n", "sequential", calls, sequential.calls_per_s,
               sequential.median_us, sequential.p99_us, sequential.cpu_us_per_call);
        printf("%-12s %8d %12.1f %12s %12s %14.1f\n", "pipelined", calls, pipelined.calls_per_s, "-", "-",
               pipelined.cpu_us_per_call);
    }
    free(latencies);
    dbus_connection_close(connection);
    dbus_connection_unref(connection);
    return 0;
}
