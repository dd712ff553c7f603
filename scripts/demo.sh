#!/usr/bin/env bash
# The main job: builds toastkit and pops a tour of real toasts — the statuses, an icon, a replace by id
# ("Sincronizando…" → "Sincronizado"), and an action whose callback prints — on your desktop when its session bus
# has a notification server, otherwise in a private headless desktop (private bus + Xvfb + dunst) started by
# scripts/headless-desktop.sh, saving screenshots under .build/demo/.
# Usage: scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

if [ "${1:-}" != "--tour" ]; then
    scripts/install-deps.sh demo
    echo "demo: building toastkit (release, fully static: scripts/build-cli.sh)"
    TOASTKIT="$(scripts/build-cli.sh)"
    export TOASTKIT
    if "$TOASTKIT" server-info >/dev/null 2>&1; then
        echo "demo: your desktop has a notification server ($("$TOASTKIT" server-info | head -n1)): the tour runs there"
        exec scripts/demo.sh --tour desktop
    fi
    echo "demo: no notification server on a session bus here: starting a private headless desktop (Xvfb + dunst)"
    exec scripts/headless-desktop.sh -- scripts/demo.sh --tour headless
fi

# ---- The tour (runs on the desktop chosen above) ----
mode=$2
toastkit=${TOASTKIT:?}
shots="$root/.build/demo"
say() { printf 'demo: %s\n' "$*"; }
show_command() {
    local line="  \$ toastkit" arg
    for arg in "$@"; do
        case "$arg" in
        *[[:space:]\"\'\$\<\>\?\!]*) line+=" \"$arg\"" ;;
        *) line+=" $arg" ;;
        esac
    done
    printf '%s\n' "$line"
}
run() { show_command "$@"; "$toastkit" "$@"; }

if [ "$mode" = headless ]; then
    mkdir -p "$shots"
    rm -f "$shots"/*.png
    # A private desktop has its own state: ids and kept toasts never touch yours.
    export XDG_RUNTIME_DIR="$NOTIFY_HARNESS_DIR/runtime" XDG_STATE_HOME="$NOTIFY_HARNESS_DIR/state"
fi

# A step that does not do what it says fails the demo (exit 1), so the test command, which runs it headless, sees it.
fail() {
    say "FAILED: $*"
    exit 1
}
# dunst draws a notification on its next loop turn and says nothing on the bus when it does: poll its count briefly.
displayed() {
    [ "$mode" = headless ] || return 0
    for _ in $(seq 1 250); do
        [ "$(dunstctl count displayed)" = "$1" ] && return 0
        sleep 0.02
    done
    fail "dunst shows $(dunstctl count displayed) notifications, expected $1"
}
shot() {
    [ "$mode" = headless ] || return 0
    sleep 0.2 # let the last frame reach the screen
    import -window root "$shots/$1"
    say "screenshot: $shots/$1"
}

say "1. the statuses, and an icon: five scripts' toasts (different applications never wait for each other)"
run send -a Editor -d 20 "Cambios guardados" "Todo está al día."
run send -a Copias -d 20 -s success "Copia de seguridad lista" "128 archivos guardados."
run send -a Disco -d 20 -s warning "Poco espacio" "Libera espacio para continuar."
run send -a Sincronización -d 20 -s error "Error al sincronizar" "Sin conexión con el servidor."
run send -a Fotos -d 20 -s notification -i photo.on.rectangle "Fotos nuevas" "12 fotos de hoy"
displayed 5
shot 01-statuses.png
if [ "$mode" = headless ]; then dunstctl close-all; fi

say "2. replace by id, across two separate runs"
run send --id sync -d indefinite -i arrow.triangle.2.circlepath "Sincronizando…" "3 de 12 archivos"
displayed 1
shot 02-sincronizando.png
run send --id sync -s success -d 10 "Sincronizado" "12 de 12 archivos"
displayed 1
shot 03-sincronizado.png
say "   one notification on the server, updated in place"
if [ "$mode" = headless ]; then dunstctl close-all; fi

say "3. an action with a callback: --wait prints the chosen action, the exit code tells the outcome"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
show_command send -p --tap open=Abrir -A archive=Archivar -A later --confirm archive=Archivado -d 30 \
    "Mensaje de Ana" "¿Archivamos el hilo?"
"$toastkit" send -p --tap open=Abrir -A archive=Archivar -A later --confirm archive=Archivado -d 30 \
    "Mensaje de Ana" "¿Archivamos el hilo?" >"$out" &
waiter=$!
if [ "$mode" = headless ]; then
    displayed 1
    shot 04-action.png
    for _ in $(seq 1 250); do
        [ -s "$out" ] && break
        sleep 0.02
    done
    id=$(head -n1 "$out")
    [ -n "$id" ] || fail "send -p printed no id"
    say "   (headless: choosing \"Archivar\" in dunst's context menu for notification $id)"
    printf '\\[%s,archive\\]$' "$id" >"$NOTIFY_HARNESS_DIR/dmenu-pick"
    dunstctl context
    sleep 0.3 # the confirmation replaces the toast for 1.5 s
    shot 05-archivado.png
else
    say "   click the toast, or pick Archivar or Later (30 s)"
fi
status=0
wait "$waiter" || status=$?
action=$(sed -n 2p "$out")
case "$status:$action" in
0:archive) say "the archive action ran: \"Mensaje de Ana\" archived (toastkit printed \"archive\", exit 0)" ;;
0:open) say "the open action ran (toastkit printed \"open\", exit 0)" ;;
5:later) say "kept for later (exit 5): \`toastkit later\` lists it, \`toastkit later --show\` brings it back" ;;
2:*) say "dismissed (exit 2)" ;;
3:*) say "nobody chose anything: expired (exit 3)" ;;
*) fail "send ended with exit code $status" ;;
esac
if [ "$mode" = headless ] && [ "$status:$action" != 0:archive ]; then
    fail "headless, \"Archivar\" was chosen: expected exit 0 and \"archive\", got $status and \"$action\""
fi

if [ "$mode" = headless ]; then
    say "done; screenshots:"
    printf '  %s\n' "$shots"/*.png
else
    say "done"
fi
