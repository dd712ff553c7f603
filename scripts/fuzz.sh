#!/usr/bin/env bash
# Builds and runs the libFuzzer targets for a bounded time each.
#   scripts/fuzz.sh [SECONDS [TARGET…]]   (default 600 s for each of: dbus-values cli-parser markup stdin)
# Targets: dbus-values (Tests/Fuzz/DBusValueFuzzer.swift with Sources/DBus, as one module); cli-parser, markup and
# stdin (Tests/Fuzz/CommandLineParserFuzzer.swift, MarkupFuzzer.swift, StandardInputFuzzer.swift) against the
# package's modules, built here as instrumented static libraries, in dependency order.
# Corpus and crashes go to .build/fuzz/<target>/; a crash file becomes a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
out=.build/fuzz
mkdir -p "$out"

dbus_flags=()
for flag in $(pkg-config --cflags dbus-1); do dbus_flags+=(-Xcc "$flag"); done

build_dbus_values() {
    swiftc -O -g -sanitize=fuzzer,address -parse-as-library -module-name DBusFuzz -package-name toastkit \
        -swift-version 6 -I Modules/CDBus "${dbus_flags[@]}" Sources/DBus/*.swift Tests/Fuzz/DBusValueFuzzer.swift \
        -ldbus-1 -o "$out/dbus-values-bin"
}

# One instrumented static library (and module) per target, in dependency order; -enable-testing so the fuzz
# target can reach the parser's internals with @testable.
build_modules() {
    local lib=$out/modules
    mkdir -p "$lib"
    local deps=(DBus ToastModel FreedesktopNotifications ToastKit ToastKitCommandLine)
    for module in "${deps[@]}"; do
        local sources=()
        mapfile -t sources < <(find "Sources/$module" -name '*.swift' | sort)
        swiftc -O -g -sanitize=fuzzer,address -parse-as-library -enable-testing -swift-version 6 \
            -enable-upcoming-feature ExistentialAny -enable-upcoming-feature InternalImportsByDefault \
            -module-name "$module" -package-name toastkit -emit-module -emit-module-path "$lib/$module.swiftmodule" \
            -I "$lib" -I Modules/CDBus "${dbus_flags[@]}" -emit-library -static -o "$lib/lib$module.a" \
            "${sources[@]}"
    done
}

# A fuzz target against the instrumented modules: build_against_modules NAME SOURCE.
build_against_modules() {
    local name=$1 source=$2 lib=$out/modules
    if [[ -z "${modules_built:-}" ]]; then
        build_modules
        modules_built=1
    fi
    swiftc -O -g -sanitize=fuzzer,address -parse-as-library -swift-version 6 -I "$lib" -I Modules/CDBus \
        "${dbus_flags[@]}" "$source" -L "$lib" -lToastKitCommandLine -lToastKit \
        -lFreedesktopNotifications -lToastModel -lDBus -lswiftSynchronization -ldbus-1 -o "$out/$name-bin"
}

run() {
    local name=$1 max_len=4096
    # Long inputs for the markup sanitizer: a cost that grows faster than the input shows as a -timeout finding.
    [[ "$name" == markup ]] && max_len=16384
    mkdir -p "$out/$name/corpus" "$out/$name/crashes"
    echo "== fuzzing $name for ${seconds}s"
    SWIFT_BACKTRACE=enable=no "$out/$name-bin" -max_total_time="$seconds" -max_len="$max_len" -timeout=30 -rss_limit_mb=3072 \
        -artifact_prefix="$out/$name/crashes/" -print_final_stats=1 "$out/$name/corpus" 2>&1 \
        | tee "$out/$name/log.txt" | grep -E '^(#[0-9]+.*(pulse|DONE)|stat::|FINDING|==[0-9]+==ERROR|SUMMARY)' || true
}

targets=("${@:2}")
[ ${#targets[@]} -gt 0 ] || targets=(dbus-values cli-parser markup stdin)
for target in "${targets[@]}"; do
    echo "== build $target"
    # Never fuzz a binary left by an earlier build: a failed build stops here.
    rm -f "$out/$target-bin"
    case "$target" in
        dbus-values) build_dbus_values || exit 1 ;;
        cli-parser) build_against_modules cli-parser Tests/Fuzz/CommandLineParserFuzzer.swift || exit 1 ;;
        markup) build_against_modules markup Tests/Fuzz/MarkupFuzzer.swift || exit 1 ;;
        stdin) build_against_modules stdin Tests/Fuzz/StandardInputFuzzer.swift || exit 1 ;;
        *) echo "fuzz.sh: unknown target $target" >&2; exit 2 ;;
    esac
    run "$target"
done
