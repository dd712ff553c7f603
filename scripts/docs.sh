#!/usr/bin/env bash
# Builds the API reference: one static website made by the toolchain's own `docc` from the doc comments (symbol graphs
# that `swift-symbolgraph-extract` reads from the built modules) and the articles of each module's `.docc` catalog.
#
# Usage: scripts/docs.sh [--check] [--output DIR]
#
#   --output DIR  where the site goes (default: .build/docs-site; an earlier site there is replaced, any other
#                 folder refused); serve it with any static web server, for example
#                 `python3 -m http.server -d .build/docs-site`, and open /documentation/toastkit
#   --check       what the test command runs: fails when docc prints any warning (a broken link, a parameter that
#                 is not documented, …) or when a public symbol of ours has no doc comment, listing each one
#
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
output=.build/docs-site
while [ $# -gt 0 ]; do
    case "$1" in
    --check) check=true ;;
    --output)
        output="${2:?--output needs a folder}"
        shift
        ;;
    -h | --help)
        sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "docs.sh: unknown option $1 (see --help)" >&2
        exit 64
        ;;
    esac
    shift
done

# The documented modules: the library products and the modules they export.
modules=(ToastModel DBus FreedesktopNotifications ToastKitTesting ToastKit)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The output folder is replaced: refuse one that holds something else than an earlier site.
if [ -e "$output" ] && [ -n "$(ls -A "$output" 2>/dev/null)" ] &&
    ! { [ -f "$output/index.html" ] && [ -d "$output/data/documentation" ]; }; then
    echo "docs.sh: $output exists and is not an API reference this script built; choose another --output" >&2
    exit 64
fi

# The modules of the last debug build (scripts/test.sh builds first); built again when missing or older than a
# source file, so the reference never describes stale code.
modules_dir=.build/debug/Modules
for module in "${modules[@]}"; do
    if [ ! -e "$modules_dir/$module.swiftmodule" ] ||
        [ -n "$(find Sources -name '*.swift' -newer "$modules_dir/$module.swiftmodule" -print -quit)" ]; then
        echo "docs.sh: building the modules (swift build)" >&2
        swift build >&2
        break
    fi
done
graphs="$work/extracted"
mkdir -p "$graphs"
read -r -a dbus_flags <<<"$(pkg-config --cflags dbus-1)"
clang_flags=()
for flag in "${dbus_flags[@]}"; do clang_flags+=(-Xcc "$flag"); done
for module in "${modules[@]}"; do
    swift-symbolgraph-extract -module-name "$module" -target "$(uname -m)-unknown-linux-gnu" \
        -I "$modules_dir" -I Modules/CDBus -I Modules/CSpawn "${clang_flags[@]}" \
        -minimum-access-level public -skip-inherited-docs -output-dir "$graphs" >"$work/extract.log" 2>&1 || {
        echo "docs.sh: swift-symbolgraph-extract failed for $module:" >&2
        cat "$work/extract.log" >&2
        exit 1
    }
done

failed=0
if $check; then
    # Every public symbol declared in Sources/ has a doc comment. Symbols the compiler synthesizes (an `==` of an
    # Equatable conformance, a protocol's default implementation) have no source location of ours and are not asked.
    for module in "${modules[@]}"; do
        python3 - "$graphs" "$module" "$PWD" <<'EOF' || failed=1
import json, sys, glob, os
graphs, module, root = sys.argv[1:]
missing = []
for path in [os.path.join(graphs, module + ".symbols.json")] + glob.glob(os.path.join(graphs, module + "@*.symbols.json")):
    for symbol in json.load(open(path))["symbols"]:
        uri = symbol.get("location", {}).get("uri", "")
        if "/Sources/" not in uri or symbol.get("accessLevel") not in ("public", "open"):
            continue
        if not symbol.get("docComment", {}).get("lines"):
            file = uri.split("/Sources/", 1)[1]
            line = symbol["location"]["position"]["line"] + 1
            missing.append(f"Sources/{file}:{line}: public `{'.'.join(symbol['pathComponents'])}` has no doc comment")
for line in sorted(missing):
    print(line)
sys.exit(1 if missing else 0)
EOF
    done
fi

# One archive for every module, from one catalog that holds every module's articles: docc resolves a link such as
# ``ToastModel/ToastCenter`` from FreedesktopNotifications only among the modules of the same conversion.
mkdir -p "$work/graphs" "$work/ToastKit.docc"
for module in "${modules[@]}"; do
    cp "$graphs/$module.symbols.json" "$work/graphs/"
    for extension in "$graphs/$module@"*.symbols.json; do
        [ -e "$extension" ] && cp "$extension" "$work/graphs/"
    done
    cp -R "Sources/$module/"*.docc/. "$work/ToastKit.docc/"
done
docc convert "$work/ToastKit.docc" \
    --additional-symbol-graph-dir "$work/graphs" \
    --output-dir "$work/ToastKit.doccarchive" \
    --fallback-display-name ToastKit \
    --fallback-bundle-identifier org.toastkit.ToastKit \
    --transform-for-static-hosting \
    >"$work/docc.log" 2>&1 || failed=1
# docc prints its diagnostics as "warning: …" / "error: …" blocks with the source lines under them.
if grep -qE '^(warning|error):' "$work/docc.log" || [ ! -d "$work/ToastKit.doccarchive" ]; then
    cat "$work/docc.log" >&2
    $check && failed=1
fi
[ -d "$work/ToastKit.doccarchive" ] || exit 1

rm -rf "$output"
mkdir -p "$(dirname "$output")"
cp -R "$work/ToastKit.doccarchive" "$output"

if [ "$failed" -ne 0 ]; then
    echo "docs.sh: the API reference has the problems above" >&2
    exit 1
fi
echo "docs.sh: the API reference is in $output (${#modules[@]} modules); serve it and open /documentation/toastkit" >&2
