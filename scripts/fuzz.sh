#!/usr/bin/env bash
# Builds and runs the libFuzzer targets for a bounded time each.
#   scripts/fuzz.sh [SECONDS]        (default 600 per target)
# Targets: dbus-values (Tests/Fuzz/DBusValueFuzzer.swift with Sources/DBus, as one module).
# Corpus and crashes go to .build/fuzz/<target>/; a crash file becomes a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
out=.build/fuzz
mkdir -p "$out"

dbus_flags=()
for flag in $(pkg-config --cflags dbus-1); do dbus_flags+=(-Xcc "$flag"); done

build_dbus_values() {
    swiftc -O -g -sanitize=fuzzer,address -parse-as-library -module-name DBusFuzz -swift-version 6 \
        -I Modules/CDBus "${dbus_flags[@]}" Sources/DBus/*.swift Tests/Fuzz/DBusValueFuzzer.swift \
        -ldbus-1 -o "$out/dbus-values"
}

run() {
    local name=$1
    mkdir -p "$out/$name/corpus" "$out/$name/crashes"
    echo "== fuzzing $name for ${seconds}s"
    SWIFT_BACKTRACE=enable=no "$out/$name-bin" -max_total_time="$seconds" -max_len=4096 -timeout=30 -rss_limit_mb=3072 \
        -artifact_prefix="$out/$name/crashes/" -print_final_stats=1 "$out/$name/corpus" 2>&1 \
        | tee "$out/$name/log.txt" | grep -E '^(#[0-9]+.*(pulse|DONE)|stat::|FINDING|==[0-9]+==ERROR|SUMMARY)' || true
}

echo "== build dbus-values"
build_dbus_values
mv "$out/dbus-values" "$out/dbus-values-bin"
run dbus-values
