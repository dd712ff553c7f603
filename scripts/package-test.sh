#!/usr/bin/env bash
# Proves the packages in clean Debian systems with no Swift in them (issue 42): runs scripts/package.sh, then in a
# Debian 12 (bookworm) and a Debian 13 (trixie) chroot installs toastkit_*.deb, shows a toast through it on a real
# notification server (the host's dunst on Xvfb, on a bus that runs inside the chroot), checks the cron form, the
# agent's D-Bus activation, the man page, bash's completion, the opt-in notify-send package and its removal, a purge
# that leaves no file, and the release archive's install.sh and --uninstall.
#
#   scripts/package-test.sh [--binary PATH] [--suites "bookworm trixie"] [--prepare-only]
#
# --binary: the fully static toastkit (default: scripts/build-cli.sh builds it; scripts/test.sh passes its own).
# --prepare-only: only build the cached chroots.
#
# The chroots: `debootstrap --variant=minbase` from Debian's mirror, plus dbus-daemon (the bus runs inside, so the
# agent the bus activates runs the chroot's /usr/bin/toastkit), libnotify-bin (the real notify-send),
# man-db and bash-completion. Made once, under $TOASTKIT_CHROOT_CACHE (default /var/cache/toastkit-test/chroots) as
# SUITE-HASH, the hash of this recipe: a changed list makes a new one. Each run mounts a fresh overlay on the pristine
# tree, so nothing a run does reaches the cache. Needs root, debootstrap, overlayfs, dunst, Xvfb, dbus-monitor.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
version=$(cat VERSION)

binary=""
suites="bookworm trixie"
prepare_only=false
run_suite=()
while [ $# -gt 0 ]; do
    case "$1" in
    --run-suite) run_suite=("${@:2}"); break ;; # internal: one suite, in a mount namespace of its own
    --binary) binary="$2"; shift 2 ;;
    --suites) suites="$2"; shift 2 ;;
    --prepare-only) prepare_only=true; shift ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package-test.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
    esac
done

fail() { echo "package-test.sh: FAIL: $*" >&2; exit 1; }
say() { echo "== package-test: $*"; }

[ "$(id -u)" -eq 0 ] || fail "needs root (debootstrap, chroot, mounts): run it as root or through sudo"
for tool in debootstrap:debootstrap dunst:dunst Xvfb:xvfb dbus-monitor:dbus-bin dbus-send:dbus-bin \
    dpkg-deb:dpkg flock:util-linux unshare:util-linux lintian:lintian; do
    command -v "${tool%%:*}" >/dev/null || fail "${tool%%:*} is missing: apt-get install ${tool#*:}"
done
grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || true
grep -qw overlay /proc/filesystems || fail "the kernel has no overlayfs (each run mounts one over the cached chroot)"

# shellcheck source=scripts/lib/chroot-cache.sh
. scripts/lib/chroot-cache.sh
chroot_packages="dbus-daemon dbus-bin libnotify-bin man-db bash-completion"
recipe_version=1 # raise when the way a chroot is made changes

# chroot_for SUITE: prints the pristine chroot's path, making it first when it is not in the cache
# (scripts/lib/chroot-cache.sh: SUITE-HASH, the hash of this recipe).
chroot_for() {
    local suite=$1 root
    root=$(chroot_cache_make "$suite" "$suite" "$recipe_version" "$chroot_packages") || fail "the $suite chroot"
    if chroot "$root" sh -c 'command -v swift swiftc' >/dev/null 2>&1; then fail "the $suite chroot has Swift"; fi
    echo "$root"
}

if $prepare_only; then
    for suite in $suites; do chroot_for "$suite" >/dev/null; done
    exit 0
fi

# ---- One suite's checks: run in a private mount namespace (unshare), so the overlay and the chroot's mounts end
# with it, whatever happens; the trap stops what the run started (by pid) and removes the scratch folder.
in_root() { # [VAR=VALUE...] COMMAND...: in the chroot, with a clean environment, as a login shell would have it
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"
}
check() { # WHAT: passes, with a line
    echo "   ok  $suite: $1"
    passed=$((passed + 1))
}
suite_fail() {
    cp -a "$root/root/.local/state/toastkit" "$logs/toastkit-state" 2>/dev/null || true
    echo "package-test.sh: FAIL: $suite: $*" >&2
    echo "package-test.sh: the run's logs: $logs" >&2
    exit 1
}
# The Notify calls the server received, as "SENDER<TAB>SUMMARY" lines (dbus-monitor's log: a call's header line,
# then its arguments; the summary is the fourth).
notify_calls() {
    awk '/^method call .*member=Notify$/ { match($0, /sender=[^ ]*/); sender = substr($0, RSTART + 7, RLENGTH - 7); n = 0; next }
         sender != "" && /^   [a-z]/ { n++; if (n == 4) { sub(/^   string "/, ""); sub(/"$/, ""); print sender "\t" $0; sender = "" } }' \
        "$logs/monitor.log"
}
landed() { # SUMMARY [SECONDS]: prints the sender of the Notify that carried SUMMARY once the server has it
    local deadline=$((SECONDS + ${2:-10})) line
    while ((SECONDS < deadline)); do
        line=$(notify_calls | awk -F '\t' -v s="$1" '$2 == s { print $1; exit }')
        if [ -n "$line" ]; then
            echo "$line"
            return 0
        fi
        sleep 0.1
    done
    return 1
}
bus_call() { # METHOD ARG: org.freedesktop.DBus's answer's value, from the host
    dbus-send --bus="$address" --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
        "org.freedesktop.DBus.$1" "$2" 2>/dev/null | awk '{ print $NF }'
}
from_agent() { # SENDER: whether that connection is the agent's (it talks to the server on a connection of its own)
    [ "$(bus_call GetConnectionUnixProcessID "string:$1" || true)" = "$agent_pid" ]
}
suite_cleanup() {
    local status=$? p pid
    trap - EXIT
    set +e
    # What this run started (the bus, Xvfb, dunst, dbus-monitor), then whatever still runs inside this run's chroot
    # (the agent the bus started).
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill -KILL "${p#/proc/}" 2>/dev/null
    done
    umount -R "$root" 2>/dev/null || umount -R -l "$root" 2>/dev/null
    rm -rf "$scratch"
    exit "$status"
}

if [ ${#run_suite[@]} -gt 0 ]; then
    suite=${run_suite[0]}
    pristine=${run_suite[1]}
    main_deb=${run_suite[2]}
    links_deb=${run_suite[3]}
    archive=${run_suite[4]}
    logs="$repo/.build/package-test/$suite"
    rm -rf "$logs"
    mkdir -p "$logs"
    passed=0
    pids=()
    scratch=$(mktemp -d /var/tmp/toastkit-package-test.XXXXXX)
    root="$scratch/root"
    trap suite_cleanup EXIT
    mkdir -p "$scratch/upper" "$scratch/work" "$root"
    mount -t overlay overlay -o "lowerdir=$pristine,upperdir=$scratch/upper,workdir=$scratch/work" "$root"
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    install -d -m 0700 "$root/run/user/0"
    install -d "$root/tmp/packages"
    cp "$main_deb" "$links_deb" "$archive" "$root/tmp/packages/"
    in_root sh -c 'command -v swift swiftc' >/dev/null && suite_fail "the chroot has Swift"

    # The package.
    in_root DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        "/tmp/packages/$(basename "$main_deb")" >"$logs/apt-install.log" 2>&1 ||
        suite_fail "apt-get install ./$(basename "$main_deb") failed: $(tail -5 "$logs/apt-install.log")"
    said=$(in_root toastkit --version) || suite_fail "toastkit --version failed"
    [ "$said" = "toastkit $version" ] || suite_fail "toastkit --version says '$said', not 'toastkit $version'"
    check "apt-get install ./$(basename "$main_deb") (no Swift here); toastkit --version: $said"
    in_root dpkg -L toastkit >"$logs/toastkit.files"

    # The user's bus, where a desktop session has it (/run/user/0/bus), run by the chroot's dbus-daemon: the agent
    # it activates is the chroot's /usr/bin/toastkit. The notification server is the host's dunst on Xvfb.
    address="unix:path=$root/run/user/0/bus"
    chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root XDG_RUNTIME_DIR=/run/user/0 LANG=C.UTF-8 \
        dbus-daemon --session --nofork --address=unix:path=/run/user/0/bus >"$logs/dbus-daemon.log" 2>&1 &
    bus=$!
    pids+=("$bus")
    for _ in $(seq 300); do [ -S "$root/run/user/0/bus" ] && break; sleep 0.1; done
    [ -S "$root/run/user/0/bus" ] || suite_fail "the chroot's dbus-daemon did not start: $(cat "$logs/dbus-daemon.log")"
    mkfifo "$scratch/display"
    exec 4<>"$scratch/display"
    Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp 3>"$scratch/display" >"$logs/xvfb.log" 2>&1 </dev/null &
    pids+=($!)
    IFS= read -r -t 60 display <&4 || suite_fail "Xvfb did not start: $(cat "$logs/xvfb.log")"
    exec 4<&-
    sed "s|@HARNESS_DIR@|$repo/scripts/harness|g" scripts/harness/dunstrc >"$scratch/dunstrc"
    mkdir -p "$scratch/dunst-config" "$scratch/dunst-runtime"
    DBUS_SESSION_BUS_ADDRESS=$address DISPLAY=":$display" XDG_CONFIG_HOME="$scratch/dunst-config" \
        XDG_RUNTIME_DIR="$scratch/dunst-runtime" dunst -config "$scratch/dunstrc" >"$logs/dunst.log" 2>&1 </dev/null &
    pids+=($!)
    for _ in $(seq 300); do
        [ "$(bus_call NameHasOwner string:org.freedesktop.Notifications)" = true ] && break
        sleep 0.1
    done
    [ "$(bus_call NameHasOwner string:org.freedesktop.Notifications)" = true ] ||
        suite_fail "dunst did not take org.freedesktop.Notifications: $(tail -5 "$logs/dunst.log")"
    dbus-monitor --address "$address" "type='method_call',interface='org.freedesktop.Notifications',member='Notify'" \
        >"$logs/monitor.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 100); do [ -s "$logs/monitor.log" ] && break; sleep 0.1; done

    # send, with the bus named; then as cron runs it: nothing but HOME and PATH=/usr/bin:/bin.
    summary="package-test $suite: send"
    in_root DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus TOASTKIT_AGENT_START_TIMEOUT=30 \
        toastkit send "$summary" >"$logs/send.log" 2>&1 || suite_fail "toastkit send failed: $(cat "$logs/send.log")"
    landed "$summary" >/dev/null || suite_fail "dunst never got '$summary' (toastkit send exited 0)"
    check "toastkit send (the direct path: the server times the toast): dunst got it"
    # With an id the toast goes through the agent, which the bus starts from the package's service file.
    summary="package-test $suite: through the agent"
    in_root DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus TOASTKIT_AGENT_START_TIMEOUT=30 \
        toastkit send --id package-test "$summary" >>"$logs/send.log" 2>&1 ||
        suite_fail "toastkit send --id failed: $(cat "$logs/send.log")"
    sender=$(landed "$summary") || suite_fail "dunst never got '$summary' (toastkit send --id exited 0)"
    agent=""
    for _ in $(seq 300); do
        agent=$(bus_call GetNameOwner string:org.toastkit.Agent1 || true)
        [ -n "$agent" ] && break
        sleep 0.1
    done
    [ -n "$agent" ] || suite_fail "no agent owns org.toastkit.Agent1 after send --id"
    agent_pid=$(bus_call GetConnectionUnixProcessID string:org.toastkit.Agent1)
    from_agent "$sender" || suite_fail "'$summary' came from $sender, not the agent (pid $agent_pid)"
    check "toastkit send --id: dunst got it from the agent (pid $agent_pid)"
    [ "$(readlink "/proc/$agent_pid/root")" = "$root" ] || suite_fail "the agent (pid $agent_pid) runs outside the chroot"
    command=$(tr '\0' ' ' <"/proc/$agent_pid/cmdline")
    [ "$command" = "/usr/bin/toastkit agent " ] || suite_fail "the agent runs '$command', not the service file's Exec"
    # The bus says it started the agent (the agent then lives in a session of its own, not as the bus's child).
    grep -q "Successfully activated service 'org.toastkit.Agent1'" "$logs/dbus-daemon.log" ||
        suite_fail "the bus did not start the agent from its service file: $(cat "$logs/dbus-daemon.log")"
    check "the agent was started by the bus through /usr/share/dbus-1/services/org.toastkit.Agent1.service: $command"
    summary="package-test $suite: from cron"
    # As the README's crontab line: a timed toast, which the agent holds.
    chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/bin:/bin toastkit send -d 30 "$summary" >"$logs/cron.log" 2>&1 ||
        suite_fail "env -i HOME=/root PATH=/usr/bin:/bin toastkit send failed: $(cat "$logs/cron.log")"
    sender=$(landed "$summary") || suite_fail "dunst never got '$summary'"
    from_agent "$sender" || suite_fail "'$summary' came from $sender, not the agent (pid $agent_pid)"
    check "env -i HOME=/root PATH=/usr/bin:/bin toastkit send -d 30 (cron's environment) found /run/user/0/bus; dunst got it from the agent"

    # The login's autostart entry: a conffile, its Exec the installed binary's `agent --if-scheduled`.
    autostart=/etc/xdg/autostart/toastkit-reminders.desktop
    grep -qx "Exec=/usr/bin/toastkit agent --if-scheduled" "$root$autostart" ||
        suite_fail "$autostart is missing or does not run /usr/bin/toastkit agent --if-scheduled"
    in_root dpkg-query -W -f="\${Conffiles}\n" toastkit | grep -q " $autostart " ||
        suite_fail "$autostart is not a conffile of the package"
    check "$autostart (a conffile): Exec=/usr/bin/toastkit agent --if-scheduled"

    page=$(in_root man -w toastkit 2>&1) || suite_fail "man -w toastkit: $page"
    [ "$page" = /usr/share/man/man1/toastkit.1.gz ] || suite_fail "man -w toastkit says $page"
    check "man -w toastkit: $page"
    completion=$(in_root bash -c '. /usr/share/bash-completion/bash_completion
        if declare -F _comp_load >/dev/null; then _comp_load toastkit; else __load_completion toastkit; fi
        complete -p toastkit' 2>&1) || suite_fail "bash-completion did not load toastkit's completion: $completion"
    check "bash-completion loads it on demand: $completion"

    # The opt-in links: the real notify-send diverted, then given back.
    real_version=$(in_root notify-send --version)
    in_root DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        "/tmp/packages/$(basename "$links_deb")" >"$logs/apt-install-links.log" 2>&1 ||
        suite_fail "apt-get install ./$(basename "$links_deb") failed: $(tail -5 "$logs/apt-install-links.log")"
    [[ "$(readlink "$root/usr/bin/notify-send")" = toastkit && "$(readlink "$root/usr/bin/dunstify")" = toastkit ]] ||
        suite_fail "/usr/bin/notify-send and dunstify are not links to toastkit"
    [[ -f "$root/usr/bin/notify-send.real" && ! -L "$root/usr/bin/notify-send.real" ]] ||
        suite_fail "libnotify's notify-send was not diverted to /usr/bin/notify-send.real"
    said=$(in_root notify-send --version)
    [ "$said" = "notify-send 0.8.1 (toastkit $version)" ] || suite_fail "notify-send --version says '$said'"
    summary="package-test $suite: notify-send"
    # -t: a toast toastkit times, so it goes through the agent (the real notify-send sends it itself).
    in_root DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus notify-send -t 5000 "$summary" >"$logs/notify-send.log" 2>&1 ||
        suite_fail "notify-send (toastkit) failed: $(cat "$logs/notify-send.log")"
    sender=$(landed "$summary") || suite_fail "dunst never got '$summary'"
    from_agent "$sender" || suite_fail "'$summary' came from $sender, not toastkit's agent (pid $agent_pid)"
    check "toastkit-notify-send: notify-send is toastkit ('$said'); dunst got its toast from the agent"
    in_root DEBIAN_FRONTEND=noninteractive apt-get remove -y toastkit-notify-send >"$logs/apt-remove-links.log" 2>&1 ||
        suite_fail "apt-get remove toastkit-notify-send failed: $(tail -5 "$logs/apt-remove-links.log")"
    [[ -f "$root/usr/bin/notify-send" && ! -L "$root/usr/bin/notify-send" ]] || suite_fail "notify-send is not given back"
    [[ ! -e "$root/usr/bin/notify-send.real" && ! -e "$root/usr/bin/dunstify" && ! -L "$root/usr/bin/dunstify" ]] ||
        suite_fail "notify-send.real or dunstify is left after the removal"
    if in_root dpkg-divert --list | grep -q toastkit; then suite_fail "a diversion is left: $(in_root dpkg-divert --list)"; fi
    said=$(in_root notify-send --version)
    [ "$said" = "$real_version" ] || suite_fail "after the removal notify-send --version says '$said', not '$real_version'"
    summary="package-test $suite: the real notify-send"
    in_root DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus notify-send -t 5000 "$summary" >>"$logs/notify-send.log" 2>&1 ||
        suite_fail "the real notify-send failed: $(cat "$logs/notify-send.log")"
    sender=$(landed "$summary") || suite_fail "dunst never got '$summary'"
    if from_agent "$sender"; then suite_fail "'$summary' still went through toastkit's agent"; fi
    check "apt-get remove toastkit-notify-send: the real notify-send is back ('$said', its own sender $sender)"

    # Purge: no file of the package's list is left (a folder stays only when another package owns it).
    kill -TERM "$agent_pid" 2>/dev/null || true
    in_root DEBIAN_FRONTEND=noninteractive apt-get purge -y toastkit >"$logs/apt-purge.log" 2>&1 ||
        suite_fail "apt-get purge toastkit failed: $(tail -5 "$logs/apt-purge.log")"
    left=()
    while IFS= read -r path; do
        [ "$path" = /. ] && continue
        if [ -d "$root$path" ] && [ ! -L "$root$path" ]; then
            in_root dpkg -S "$path" >/dev/null 2>&1 || left+=("$path/")
        elif [ -e "$root$path" ] || [ -L "$root$path" ]; then
            left+=("$path")
        fi
    done <"$logs/toastkit.files"
    [ ${#left[@]} -eq 0 ] || suite_fail "apt-get purge toastkit left: ${left[*]}"
    check "apt-get purge toastkit: none of its $(wc -l <"$logs/toastkit.files") paths is left"

    # The release archive: its install.sh into /usr/local (the default), a toast through it, --uninstall.
    name=$(basename "$archive" .tar.gz)
    in_root sh -c "cd /tmp && tar -xzf /tmp/packages/$name.tar.gz" || suite_fail "tar -xzf $name.tar.gz failed"
    (cd "$root" && find usr/local | sort) >"$logs/usr-local.before"
    in_root "/tmp/$name/install.sh" >"$logs/archive-install.log" 2>&1 ||
        suite_fail "the archive's install.sh failed: $(cat "$logs/archive-install.log")"
    grep -q "note: cron runs jobs with PATH=/usr/bin:/bin" "$logs/archive-install.log" ||
        suite_fail "install.sh into /usr/local gave no note about cron's PATH"
    grep -qx 'Exec=/usr/local/bin/toastkit agent' "$root/usr/local/share/dbus-1/services/org.toastkit.Agent1.service" ||
        suite_fail "the installed D-Bus service file does not run /usr/local/bin/toastkit"
    summary="package-test $suite: the archive's toastkit"
    in_root DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus /usr/local/bin/toastkit send --no-agent "$summary" \
        >"$logs/archive-send.log" 2>&1 || suite_fail "/usr/local/bin/toastkit send failed: $(cat "$logs/archive-send.log")"
    landed "$summary" >/dev/null || suite_fail "dunst never got '$summary'"
    check "the archive's install.sh: /usr/local/bin/toastkit sends; the cron note is given"
    in_root "/tmp/$name/install.sh" --uninstall >"$logs/archive-uninstall.log" 2>&1 ||
        suite_fail "install.sh --uninstall failed: $(cat "$logs/archive-uninstall.log")"
    (cd "$root" && find usr/local | sort) >"$logs/usr-local.after"
    diff "$logs/usr-local.before" "$logs/usr-local.after" >"$logs/usr-local.diff" ||
        suite_fail "install.sh --uninstall left: $(cat "$logs/usr-local.diff")"
    check "install.sh --uninstall: /usr/local is as it was"
    echo "$passed" >"$logs/passed"
    exit 0
fi

# ---- The run: the packages, then each suite in its own mount namespace.
start=$SECONDS
[ -n "$binary" ] || binary="$(scripts/build-cli.sh)"
say "scripts/package.sh"
mapfile -t made < <(scripts/package.sh --binary "$binary")
[ ${#made[@]} -eq 3 ] || fail "scripts/package.sh did not make the three files"
for suite in $suites; do
    pristine=$(chroot_for "$suite")
    say "$suite ($pristine, a fresh overlay)"
    unshare --mount --propagation private -- "$0" --run-suite "$suite" "$pristine" "${made[@]}"
done
summary=""
for suite in $suites; do summary+=" $suite: $(cat ".build/package-test/$suite/passed") checks passed;"; done
echo "package-test: PASS —$summary ${made[*]##*/} in $((SECONDS - start)) s"
