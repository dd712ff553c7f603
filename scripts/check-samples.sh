#!/usr/bin/env bash
# Type-checks every ```swift sample in README.md and in Sources/*/*.docc/*.md against this package's modules, so the
# documentation cannot show an API that does not exist.
#
# Usage: scripts/check-samples.sh [--build] [FILE.md…]
#
# It uses the modules of the last `swift build` (scripts/test.sh builds just before); it builds first only with
# --build or when they are missing. Every fenced block whose info string is exactly `swift` is checked:
#
# - a block that starts with `// swift-tools-version` is a manifest: it is loaded by SwiftPM (swift package
#   show-dependencies) in a scratch folder where each `.package(path: "../NAME")` is this repository, so product
#   names and package identities are checked, not just the syntax;
# - a block with `import` lines is a program: it is type-checked as it is, as the main file (top-level code
#   allowed; `@main` makes it a library file);
# - any other block is a fragment: it gets the imports of the document's prelude, then is type-checked as a program.
#
# A document may have one prelude, a comment that readers do not see:
#
#     <!-- check-samples: prelude
#     import ToastKit
#     public let store = Store()        // the app objects the samples use, as public declarations
#     -->
#
# It is compiled as a module that every sample of the document imports implicitly, so a sample's own declarations
# (`let toasts = …`) shadow the prelude's. A block right after a line `<!-- no-check: REASON -->` is not checked;
# the reason is printed. Errors are reported at the document's file:line.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

build=0
files=()
for arg in "$@"; do
    case "$arg" in
        --build) build=1 ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
            exit 0
            ;;
        -*)
            echo "check-samples: unknown option $arg (see --help)" >&2
            exit 64
            ;;
        *) files+=("$arg") ;;
    esac
done
if [ "${#files[@]}" -eq 0 ]; then
    files=(README.md Sources/*/*.docc/*.md)
fi

bin_path="$(swift build --show-bin-path)"
modules="$bin_path/Modules"
needed=(ToastModel ToastKit ToastKitTesting FreedesktopNotifications DBus ToastKitCommandLine)
if [ "$build" -eq 0 ]; then
    for module in "${needed[@]}"; do
        [ -f "$modules/$module.swiftmodule" ] || build=1
    done
fi
if [ "$build" -eq 1 ]; then
    echo "check-samples: swift build" >&2
    swift build >&2
fi

# The CDBus system module (Modules/CDBus) includes <dbus/dbus.h>.
cflags=()
if dbus_flags="$(pkg-config --cflags-only-I dbus-1 2>/dev/null)"; then
    for flag in $dbus_flags; do cflags+=(-Xcc "$flag"); done
else
    cflags=(-Xcc -I/usr/include/dbus-1.0 -Xcc "-I/usr/lib/$(uname -m)-linux-gnu/dbus-1.0/include")
fi
swiftc_flags=(-swift-version 6 -diagnostic-style=llvm -I "$modules" -I Modules "${cflags[@]}")

work="$(mktemp -d "${TMPDIR:-/tmp}/check-samples.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# Splits one document into $dir/prelude.swift, $dir/prelude.imports, $dir/s<N>.swift and the index
# $dir/index (N, first line, kind, reason; tab-separated).
extract() {
    local doc="$1" dir="$2"
    awk -v doc="$doc" -v dir="$dir" '
        function fail(message) { printf "%s:%d: %s\n", doc, NR, message > "/dev/stderr"; failed = 1; exit 1 }
        function strip_indent(text) { return substr(text, 1, indent) ~ /^ *$/ ? substr(text, indent + 1) : text }
        BEGIN { state = "text"; count = 0; previous = ""; has_prelude = 0 }
        state == "prelude" {
            if ($0 ~ /^-->[ \t]*$/) { print "#sourceLocation()" > (dir "/prelude.swift"); state = "text"; next }
            print > (dir "/prelude.swift")
            if ($0 ~ /^import[ \t]/) print > (dir "/prelude.imports")
            next
        }
        state == "swift" || state == "other" {
            if ($0 ~ /^ *```[ \t]*$/) {
                if (state == "swift") {
                    kind = "fragment"
                    if (first_code ~ /^\/\/ swift-tools-version/) kind = "manifest"
                    else if (has_import) kind = "program"
                    if (reason != "") kind = "excluded"
                    printf "%d\t%d\t%s\t%s\n", count, start, kind, reason > (dir "/index")
                    close(file)
                }
                state = "text"; previous = ""; next
            }
            if (state == "swift") {
                line = strip_indent($0)
                print line > file
                if (first_code == "" && line !~ /^[ \t]*$/) first_code = line
                if (line ~ /^import[ \t]/) has_import = 1
            }
            next
        }
        /^<!-- check-samples: prelude[ \t]*$/ {
            if (has_prelude) fail("a second check-samples prelude")
            has_prelude = 1; state = "prelude"
            printf "#sourceLocation(file: \"%s\", line: %d)\n", doc, NR + 1 > (dir "/prelude.swift")
            next
        }
        /^ *```/ {
            match($0, /^ */); indent = RLENGTH
            info = substr($0, indent + 4); sub(/[ \t]+$/, "", info)
            if (info != "swift") { state = "other"; next }
            state = "swift"; count++; start = NR + 1; first_code = ""; has_import = 0
            file = dir "/s" count ".swift"
            reason = ""
            if (previous ~ /^<!-- no-check: .+ -->[ \t]*$/) {
                reason = previous; sub(/^<!-- no-check: /, "", reason); sub(/ -->[ \t]*$/, "", reason)
            } else if (previous ~ /^<!-- no-check/) {
                fail("write the exclusion as <!-- no-check: REASON --> on the line before the fence")
            }
            printf "" > file
            next
        }
        $0 !~ /^[ \t]*$/ { previous = $0 }
        END {
            if (failed) exit 1
            if (state == "swift" || state == "other") {
                printf "%s: a code block is not closed\n", doc > "/dev/stderr"; exit 1
            }
            if (state == "prelude") {
                printf "%s: the check-samples prelude is not closed with -->\n", doc > "/dev/stderr"; exit 1
            }
            printf "" >> (dir "/index")
        }
    ' "$doc"
}

# Loads a manifest sample with SwiftPM next to a link to this repository named as its `.package(path:)` says.
check_manifest() {
    local sample="$1" dir="$2" output path kind name flat
    mkdir -p "$dir/app"
    cp "$sample" "$dir/app/Package.swift"
    flat="$(sed 's#//.*##' "$sample" | tr '\n' ' ')" # without comments, on one line
    while IFS= read -r path; do
        if [[ ! "$path" =~ ^\.\./[^/]+$ ]]; then
            echo "error: a manifest sample must use .package(path: \"../NAME\"), not \"$path\""
            return 1
        fi
        ln -sfn "$root" "$dir/${path#../}"
    done < <(grep -oE '\.package\( *path: *"[^"]*"' <<<"$flat" | sed -E 's/.*"([^"]*)"$/\1/')
    if grep -qE '\.package\( *url:' <<<"$flat"; then
        echo "error: a manifest sample cannot be loaded offline with .package(url:); use .package(path: \"../NAME\")"
        return 1
    fi
    while read -r kind name; do
        if [ "$kind" = testTarget ]; then
            mkdir -p "$dir/app/Tests/$name" && : >"$dir/app/Tests/$name/$name.swift"
        else
            mkdir -p "$dir/app/Sources/$name" && : >"$dir/app/Sources/$name/$name.swift"
        fi
    done < <(grep -oE '\.(executableTarget|target|testTarget)\( *name: *"[^"]+"' <<<"$flat" |
        sed -E 's/^\.([A-Za-z]+)\( *name: *"([^"]+)"$/\1 \2/')
    mkdir -p "$dir/tmp" # SwiftPM leaves its lock files in TMPDIR
    if ! output="$(TMPDIR="$dir/tmp" swift package --package-path "$dir/app" --scratch-path "$dir/scratch" \
        show-dependencies 2>&1)"; then
        printf '%s\n' "$output" | grep -v '^warning: ' || true
        return 1
    fi
}

documents=0 samples=0 typechecked=0 manifests=0 excluded=0 failures=0
exclusions=()
for doc in "${files[@]}"; do
    [ -f "$doc" ] || {
        echo "check-samples: no such file: $doc" >&2
        exit 66
    }
    documents=$((documents + 1))
    dir="$work/doc$documents"
    mkdir -p "$dir"
    extract "$doc" "$dir" || {
        echo "check-samples: FAILED $doc (its code blocks, see above)"
        failures=$((failures + 1))
        continue
    }

    prelude_flags=()
    if [ -f "$dir/prelude.swift" ]; then
        mkdir -p "$dir/prelude"
        if ! output="$(swiftc -emit-module -parse-as-library -module-name SamplePrelude "${swiftc_flags[@]}" \
            -emit-module-path "$dir/prelude/SamplePrelude.swiftmodule" "$dir/prelude.swift" 2>&1)"; then
            echo "check-samples: FAILED $doc (its check-samples prelude):"
            printf '%s\n' "$output"
            failures=$((failures + 1))
            continue
        fi
        prelude_flags=(-I "$dir/prelude" -Xfrontend -import-module -Xfrontend SamplePrelude)
    fi

    while IFS=$'\t' read -r number line kind reason; do
        samples=$((samples + 1))
        sample="$dir/s$number.swift"
        case "$kind" in
            excluded)
                excluded=$((excluded + 1))
                exclusions+=("$doc:$line: $reason")
                continue
                ;;
            manifest)
                if output="$(check_manifest "$sample" "$dir/manifest$number" 2>&1)"; then
                    manifests=$((manifests + 1))
                else
                    echo "check-samples: FAILED $doc:$line (manifest):"
                    printf '%s\n' "$output"
                    failures=$((failures + 1))
                fi
                continue
                ;;
        esac
        source="$dir/main$number.swift"
        {
            if [ "$kind" = fragment ] && [ -f "$dir/prelude.imports" ]; then cat "$dir/prelude.imports"; fi
            printf '#sourceLocation(file: "%s", line: %d)\n' "$doc" "$line"
            cat "$sample"
            printf '#sourceLocation()\n'
        } >"$source"
        mode=()
        if grep -q '^@main' "$sample"; then mode=(-parse-as-library); fi
        if output="$(swiftc -typecheck -module-name Sample "${mode[@]}" "${swiftc_flags[@]}" "${prelude_flags[@]}" \
            "$source" 2>&1)"; then
            typechecked=$((typechecked + 1))
        else
            echo "check-samples: FAILED $doc:$line ($kind):"
            printf '%s\n' "$output"
            failures=$((failures + 1))
        fi
    done <"$dir/index"
done

for exclusion in "${exclusions[@]}"; do
    echo "check-samples: not checked: $exclusion"
done
echo "check-samples: $samples samples in $documents documents: $typechecked type-checked, $manifests manifests" \
    "loaded, $excluded not checked, $failures failed"
[ "$failures" -eq 0 ]
