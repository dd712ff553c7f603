#!/bin/sh
# Installs toastkit from this folder (the release archive toastkit-VERSION-x86_64-linux.tar.gz, or the folder
# scripts/install.sh stages): the binary, the man page, the bash, zsh and fish completions, and the agent's D-Bus
# activation file, systemd user unit and login autostart entry, under PREFIX (default /usr/local). Needs nothing but a POSIX sh, coreutils
# and sed; run it as a user who may write to PREFIX (root for /usr/local).
#
#   ./install.sh [--links] [PREFIX]      e.g. ./install.sh ~/.local
#   ./install.sh --uninstall [PREFIX]    removes exactly what an earlier install put there (and the folders it made)
#
#   --links  also installs links named notify-send and dunstify to toastkit in PREFIX/bin: scripts that call those
#            tools by name then get toastkit, with those tools' command lines, output and exit codes.
#
# What was installed is listed in PREFIX/share/toastkit/installed ("f PATH" for a file or link, "d PATH" for a
# folder this script made; PREFIX itself stays); --uninstall reads that list.
set -eu

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
die() {
    echo "install.sh: $*" >&2
    exit 64
}

links=false
uninstall=false
prefix=""
for argument in "$@"; do
    case "$argument" in
    -h | --help) usage; exit 0 ;;
    --links) links=true ;;
    --uninstall) uninstall=true ;;
    -*) die "unknown option '$argument' (see --help)" ;;
    *) [ -z "$prefix" ] || die "one PREFIX only (see --help)"; prefix=$argument ;;
    esac
done
[ -n "$prefix" ] || prefix=/usr/local
if $links && $uninstall; then die "--links and --uninstall do not go together (--uninstall removes the links too)"; fi

# The files, as they lie here and under PREFIX.
files="bin/toastkit
share/man/man1/toastkit.1.gz
share/bash-completion/completions/toastkit
share/zsh/vendor-completions/_toastkit
share/fish/vendor_completions.d/toastkit.fish
share/dbus-1/services/org.toastkit.Agent1.service
share/systemd/user/toastkit-agent.service
etc/xdg/autostart/toastkit-reminders.desktop
share/doc/toastkit/copyright"
list=share/toastkit/installed

if $uninstall; then
    [ -d "$prefix" ] || die "$prefix does not exist"
    prefix=$(cd "$prefix" && pwd)
    if [ ! -f "$prefix/$list" ]; then
        echo "install.sh: nothing to uninstall: $prefix/$list (what install.sh installed there) does not exist" >&2
        exit 1
    fi
    while read -r kind path; do
        if [ "$kind" = f ]; then rm -f "$prefix/$path"; fi
    done <"$prefix/$list"
    # The folders this script made, deepest first; one that holds something else stays.
    folders=$(sed -n 's/^d //p' "$prefix/$list" | sort -r)
    rm -f "$prefix/$list"
    echo "$folders" | while read -r path; do
        if [ -n "$path" ]; then rmdir "$prefix/$path" 2>/dev/null || true; fi
    done
    echo "uninstalled toastkit from $prefix"
    exit 0
fi

here=$(cd "$(dirname "$0")" && pwd)
[ -x "$here/bin/toastkit" ] || die "$here/bin/toastkit is missing: run the install.sh that came with the files"
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
bindir="$prefix/bin"

# What an earlier install put there stays listed (an install over an install, then --uninstall removes both).
made=""
earlier=""
if [ -f "$prefix/$list" ]; then
    made=$(sed -n 's/^d //p' "$prefix/$list")
    earlier=$(sed -n '/^f /p' "$prefix/$list")
fi
make_folder() { # PATH relative to PREFIX: makes it and its missing parents, noting each one made
    [ -d "$prefix/$1" ] && return 0
    case "$1" in */*) make_folder "${1%/*}" ;; esac
    mkdir "$prefix/$1"
    made="$made
$1"
}

installed=""
for path in $files; do
    make_folder "${path%/*}"
    case "$path" in
    *.service | *.desktop) # the agent's Exec lines name the installed binary
        sed "s|@BINDIR@|$bindir|g" "$here/$path" >"$prefix/$path.tmp"
        chmod 0644 "$prefix/$path.tmp"
        mv -f "$prefix/$path.tmp" "$prefix/$path"
        ;;
    bin/*) install -m 0755 "$here/$path" "$prefix/$path" ;;
    *) install -m 0644 "$here/$path" "$prefix/$path" ;;
    esac
    installed="$installed
f $path"
done
if $links; then
    for tool in notify-send dunstify; do
        ln -sfn toastkit "$bindir/$tool"
        installed="$installed
f bin/$tool"
    done
fi
make_folder "${list%/*}"
{
    printf '%s\n%s\n' "$installed" "$earlier" | sed '/^$/d' | sort -u
    printf '%s\n' "$made" | sed '/^$/d' | sort -u | sed 's/^/d /'
} >"$prefix/$list.tmp"
mv -f "$prefix/$list.tmp" "$prefix/$list"

echo "installed $("$bindir/toastkit" --version) under $prefix:"
printf '%s\n' "$installed" | sed -n 's|^f |  '"$prefix"'/|p'
echo "  (the list: $prefix/$list; undo with: ${TOASTKIT_INSTALLER:-$0} --uninstall $prefix)"
case ":${PATH:-}:" in
*":$bindir:"*) ;;
*) echo "note: $bindir is not on PATH" >&2 ;;
esac
# cron runs jobs with PATH=/usr/bin:/bin: elsewhere, a crontab line must name the binary or set PATH.
case "$bindir" in
/usr/bin | /bin) ;;
*)
    echo "note: cron runs jobs with PATH=/usr/bin:/bin, which does not hold $bindir: in a crontab, call" \
        "$bindir/toastkit by its full path, or put PATH=$bindir:/usr/bin:/bin above the jobs (the toast finds" \
        "your desktop's bus by itself)" >&2
    ;;
esac
# Desktops read autostart entries from /etc/xdg/autostart (XDG_CONFIG_DIRS) and ~/.config/autostart only.
case ":${XDG_CONFIG_DIRS:-/etc/xdg}:" in
*":$prefix/etc/xdg:"*) ;;
*)
    echo "note: reminders that come due while you are logged out are shown at your next login only once" \
        "$prefix/etc/xdg/autostart/toastkit-reminders.desktop is linked into /etc/xdg/autostart or" \
        "${HOME:-your home}/.config/autostart (until then, at the next toastkit command)" >&2
    ;;
esac
if $links && [ "$(command -v notify-send || true)" != "$bindir/notify-send" ]; then
    echo "note: notify-send on PATH is $(command -v notify-send || echo 'none'), not the link: put $bindir first" >&2
fi
