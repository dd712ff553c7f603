import ToastKitAgent

/// The help pages: OVERVIEW, USAGE, ARGUMENTS, OPTIONS (and EXIT CODES for the top level and `send`).
enum HelpText {
    static func page(for command: Command?) -> String {
        switch command {
        case nil: topLevel
        case .send?: send
        case .close?: close
        case .later?: later
        case .capabilities?: capabilities
        case .serverInfo?: serverInfo
        case .listen?: listen
        case .wait?: wait
        case .list?: list
        case .run?: run
        case .progress?: progress
        case .doctor?: doctor
        case .agent?: agent
        case .notifySend?: DialectOutput.help(for: .notifySend)
        case .dunstify?: DialectOutput.help(for: .dunstify)
        }
    }

    static let exitCodes = """
        EXIT CODES:
          0     shown (without --wait; through the agent also: waiting in its application's queue), or an action
                was invoked (with --wait)
          2     dismissed by the user
          3     expired
          4     closed by another program, by `toastkit close`, or by the server without a reason
          5     deferred: the Later action was chosen (see `toastkit later`)
          6     dropped for Do Not Disturb (--dnd drop): never shown
          64    usage error: unknown option, missing or conflicting arguments
          65    bad input data: an invalid value or hint, UTF-8 or a NUL byte
          69    no session bus, no notification server, or the server failed (or left for good while waiting)
          70    internal error
          74    output lost: standard output could not be written (the toast was shown), or a toast
                could not be kept for Later (the Later store cannot be written)
          130   interrupted by SIGINT while waiting (the toast was closed); 143 for SIGTERM
        """

    static let topLevel = """
        OVERVIEW: Desktop toasts from scripts: a better notify-send, with string ids that replace across runs,
        status presets, durations that hold, actions, Later, clear exit codes and JSON.

        USAGE: toastkit [--backend auto|notifications|portal] <command> [options]
               toastkit --help | --version | help <command>

        ARGUMENTS:
          <command>
            send            Show a toast (notify-send compatible flags).
            close           Close a toast sent with --id, or a notification by number.
            later           List the toasts kept with the Later action, or show them again.
            capabilities    Print what the notification server can do.
            server-info     Print the notification server's name, vendor and version.
            listen          Watch the notification traffic on the session bus.
            wait            Wait for the end of a toast sent earlier with --id (through the agent).
            list            List the live toasts (through the agent) and the ones kept for Later.
            run             Run a command, then show a toast of how it ended (status, time, last lines).
            progress        One toast that follows a task's progress, read from standard input.
            doctor          Say whether a toast can be shown from here, and if not, what to do.
            agent           Run the per-user toast agent (started on demand by send).

        OPTIONS:
          --backend auto|notifications|portal
                            Where send, capabilities and server-info go (before the command): the
                            notification server, or the notification portal of Flatpak and Snap apps.
                            auto (the default) picks the portal in a sandbox.
          --user NAME|UID|all
                            For root (before the command): run it as that user, in their desktop
                            session (/run/user/UID/bus, logind's DISPLAY), privileges dropped first,
                            no terminal or descriptor of root's; all: every user with a graphical
                            session, at once.
          --help            Show help (also `toastkit <command> --help`).
          --version         Print the version.

        \(exitCodes)

        EXAMPLES:
          toastkit send "Cambios guardados"
          toastkit send --id sync "Sincronizando…" && toastkit send --id sync -s success "Sincronizado"
          make >build.log 2>&1 || tail -5 build.log | toastkit send -s error "Build failed" -
          choice=$(toastkit send -A archive=Archive -A later "New mail") && echo "$choice"

        """

    static let send = """
        OVERVIEW: Show a toast on the desktop's notification server.
        Without --wait (and without actions) the command returns as soon as the server accepted the toast.
        The toast goes through the per-user agent (`toastkit agent`, started on demand), so its duration holds,
        --id replaces it and --on-action runs after this command has exited; if no agent can be reached within
        2 s, the toast is shown directly, with a warning.

        USAGE: toastkit send [options] TITLE [MESSAGE]

        ARGUMENTS:
          TITLE                     The first line (summary).
          MESSAGE                   The second line (body). `-` reads it from standard input, up to
                                    \(MessageInput.limit) bytes (longer input is cut with "…" and a warning).

        OPTIONS:
          -s, --status STATUS       normal, success, warning, error or notification (icon and urgency).
          -i, --icon NAME|PATH      A theme icon name (SF Symbol names are mapped) or an image file, sent as
                                    notify-send sends it; a missing file costs only the icon (a warning).
                                    No icon at all unless -i, -n or -s asks for one. An empty -i, -s, --sound
                                    or --lang is none (a warning); an empty -c or string hint is not sent.
              --id ID               A string id: a later `send --id ID` replaces this toast, across runs.
          -d, --duration SECONDS|auto|indefinite
                                    How long it stays (auto = 4 s), in seconds (2.5) or with units (500ms,
                                    90s, 10m, 1h30m); it holds on every server. Without -d or -t
                                    the server's settings decide, as for notify-send, except for a toast with
                                    actions: it stays until it is answered.
          -A, --action ID=LABEL     An action button; repeat for a second one (first leading, second trailing).
                                    `-A later` is the built-in Later action (`-A later=10m`: it brings the
                                    toast back by itself after 10 min), `-A dismiss` the built-in Dismiss;
                                    `-A LABEL` alone uses its position (0, 1) as the id, as notify-send does;
                                    `-A default=LABEL` is the click on the toast (as --tap).
                                    Actions imply --wait, unless --on-action is given.
              --default ID          The answer when a toast with actions is dismissed or expires: printed,
                                    exit 0 (for `set -e` scripts).
              --tap ID[=LABEL]      The action for clicking the toast (server key "default"); implies --wait.
              --confirm ID=TEXT     After action ID, show TEXT briefly in place of the toast.
              --reply [ID=]LABEL    A button that asks for a short text (id "reply" by default); the text is
                                    printed in place of the id (--json: the action event's "reply"). Plasma
                                    draws the field in the toast; elsewhere a prompt opens: TOASTKIT_REPLY_PROMPT
                                    (a shell command that prints the text), else kdialog, zenity or yad.
              --reply-placeholder TEXT
                                    The grey text in the empty reply field.
              --on-action ID=COMMAND
                                    Run COMMAND when action ID is invoked, even after this command has exited
                                    (the agent runs it). COMMAND is split into words as a shell would (quotes,
                                    backslashes) and run without a shell; its environment has TOASTKIT_ACTION,
                                    TOASTKIT_ID and TOASTKIT_ACTIVATION_TOKEN; its output goes to
                                    $XDG_STATE_HOME/toastkit/actions.log.
              --shell               Run the --on-action commands with /bin/sh -c instead.
              --no-agent            Show the toast directly, without the agent (also TOASTKIT_NO_AGENT=1): it
                                    then lives only as long as this command waits.
              --progress PERCENT    How far the task has come (0-100, or indeterminate): a bar where the
                                    server draws one (dunst, mako, swaync; Plasma's job view, through the
                                    agent), a text bar in the message elsewhere.
              --sound SOUND         Play a sound when the toast first appears: a name from the sound theme
                                    (message-new-instant, complete, bell; default), a file, or silent. The
                                    server plays it where it can (GNOME; MATE, files), toastkit elsewhere
                                    (libcanberra, pw-play or paplay; TOASTKIT_SOUND_PLAYER to choose, also
                                    through the agent); not again for an update with the same sound, never
                                    during Do Not Disturb. One that cannot be played is a warning.
              --dnd hold|drop|show  While the desktop's Do Not Disturb is on (read on dunst, Plasma, swaync,
                                    mako, xfce4-notifyd, GNOME, MATE, LXQt): hold the toast until it ends (the default; the agent
                                    holds it after this command exits), drop it (exit 6), or send it anyway
                                    (the server decides). Each says so: a `suppressed` event, a note on
                                    stderr. notify-send and dunstify send anyway, as the real tools do.
              --in DURATION         Show it later: after DURATION (90s, 10m, 1h30m). The agent keeps it, also
                                    across restarts and logins; `list` shows it, `close --id` cancels it.
              --at TIME             Show it at TIME: 17:00 (today or tomorrow), 2026-12-24 09:00, or with Z
                                    or +01:00. Not with --wait, -p, or actions without --on-action.
              --terminal            Show it through the terminal's escape code (OSC 99 on kitty, OSC 9 on
                                    iTerm2, Ghostty and Windows Terminal, OSC 777 on foot, WezTerm, VTE and
                                    urxvt, else a bell and a line), also over SSH; taken by itself when there
                                    is no session bus but a terminal. No --wait, -A, --tap or --on-action.
              --terminal-code CODE  As --terminal, with this code: 99, 777, 9 or plain.
          -w, --wait                Stay until the toast ends: print the invoked action's id as the first line,
                                    exit with the outcome's code; SIGINT/SIGTERM close the toast. A toast with
                                    a duration ends on time whatever the server does; if the server leaves,
                                    another is awaited for 10 s, then the exit is 69.
              --json                One JSON object per line for each event: presented, action, closed,
                                    deferred, suppressed (how: held, dropped, sent_anyway), failed, warning
                                    (reason: a sound not played, a feature the server lacks).
          -p, --print-id            Print the server's notification id at once (with --wait, before the
                                    action's id).
          -a, --app-name NAME       The application name (default: toastkit).
          -n, --app-icon ICON       The application icon (app_icon).
          -u, --urgency LEVEL       low, normal or critical (beats the status's urgency).
          -c, --category TYPE       The notification category, e.g. email.arrived.
          -h, --hint TYPE:NAME:VALUE
                                    An extra hint; TYPE is boolean, int, double, string, byte or variant
                                    (<int32 5>, <uint32 5>, <byte 0x05>, <double 1.5>, <true>, <'text'>).
                                    -h is the hint flag, as in notify-send: help is --help.
          -e, --transient           Do not keep the toast in the server's history.
              --plain               The message is plain text, shown as typed. By default it is markup as
                                    notify-send passes it (<b> <i> <u> <a href> <span …>), kept valid; its
                                    backslash escapes (\\n, \\t, \\\\) are applied as notify-send applies them.
              --lang CODE           The language of the built-in labels (Later, Dismiss, Open): en, es, ja,
                                    zh-Hans, zh-Hant, or a locale name (es_MX.UTF-8); the locale's by default.
          -r, --replace-id N        Replace the server's notification N (notify-send's -r).
          -t, --expire-time MS      Duration in milliseconds, as notify-send (-1 the server's, 0 never);
                                    cannot be combined with -d.
              --help                Show this help.

        \(exitCodes)

        """

    static let close = """
        OVERVIEW: Close a toast sent with --id, or a notification by its server number.

        USAGE: toastkit close --id ID
               toastkit close --server-id N

        ARGUMENTS:
          (none)

        OPTIONS:
          --id ID           The string id given to `toastkit send --id`.
          --server-id N     The server's notification number (as printed by `send -p`).
          --help            Show this help.

        A toast sent through the agent is closed by the agent (the connection that sent it, which GNOME Shell
        requires); one sent directly is closed by its server number from the --id store.

        EXIT CODES: 0 closed; 64 usage error; 65 unknown id; 69 no bus or no notification server; 74 the --id
        store cannot be read.

        """

    static let later = """
        OVERVIEW: The toasts kept with the built-in Later action (`toastkit send -A later …`).
        Without options, list them: one line each (id, status, when kept, title), tab-separated. Each application
        keeps its own: these are the command line's, unless --app names an application that uses the library.

        USAGE: toastkit later [--show] [--json] [--app NAME]

        ARGUMENTS:
          (none)

        OPTIONS:
          --show            Show them again (they leave the list), and print one line per toast: id, server
                            number, title. Their buttons do what they did: one with an --on-action command
                            runs it (the agent shows those toasts, and this command does not wait for
                            them); for the others this command stays until each has ended, printing the
                            chosen action as `send` did (id, action; with --json the `action` event).
                            Later again closes a toast and keeps it; Ctrl-C closes those still up and keeps
                            them too.
          --json            One JSON object per line.
          --app NAME        The toasts an application kept (its `appName`, as in
                            $XDG_STATE_HOME/toastkit/later/NAME.json); --show shows them with that name.
          --help            Show this help.

        EXIT CODES: 0 done; 64 usage error; 65 unreadable store (set aside); 69 no bus or no notification server,
        or a toast with --on-action commands stays kept (no agent); 74 the store cannot be written (--show);
        130/143 interrupted (--show; the toasts still up are kept).

        """

    static let run = """
        OVERVIEW: Run CMD with its input and output as they are, then show a toast that says what ran, how it
        ended, how long it took and the last lines of its output, with an action that opens the whole output
        ($XDG_STATE_HOME/toastkit/runs/, the 20 newest kept). Exits with CMD's exit code (128+N for signal N).
        Ctrl-C and Ctrl-\\ reach CMD, which decides; SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 sent to toastkit are
        passed on to it.

        CMD's output is passed through as it comes. Where toastkit's output and errors go to one place (a
        terminal, 2>&1), CMD writes both into one pipe: the log and the toast's lines keep the order it wrote
        them in. Where they go apart (> FILE, 2>/dev/null), CMD's output goes to toastkit's output and its
        errors to its errors; the log has both, each in its order, interleaved as they were read.

        USAGE: toastkit run [options] [--] CMD [ARG…]
               toastkit run [options] --pid PID

        ARGUMENTS:
          CMD [ARG…]        The command; options end at `--` or at the first word that is not one.

        OPTIONS:
          --tail N          How many of the last lines of output the toast shows (0 to 20; default 3).
          --min-seconds S   No toast when CMD took less than S (seconds, or 90s, 5m, 1h; default 0:
                            always).
          --pid PID         Wait for a process that is already running, then show its toast (exit 0).
          -a, --app-name NAME
                            The toast's application name (default toastkit).
          -d, --duration SECONDS|auto|indefinite
                            How long the toast stays (default 10; seconds, or 500ms, 10m, …).
          --lang CODE       The language of the action's label (en, es, ja, zh-Hans, zh-Hant).
          --help            Show this help.

        EXAMPLES:
          toastkit run -- make -j8
          toastkit run --min-seconds 30 --tail 5 -- ./deploy.sh production
          toastkit run --pid "$(pgrep -n rsync)"

        EXIT CODES: CMD's (127 when it cannot be found, 126 when it cannot be run); with --pid 0 once it ended;
        64 usage error; 65 no such process.

        """

    static let progress = """
        OVERVIEW: Show one toast that follows a task: each line of standard input is a step, a percentage and,
        when it changes, the message ("40", "40 Copying photos", "indeterminate Searching"). The newest step is
        shown at most every 50 ms (faster lines merge) and replaces the one before: a bar where the server draws
        one (dunst, mako, swaync, xfce; on Plasma the agent draws a job view), a text bar in the message
        elsewhere. When the input ends, the toast becomes a normal toast with the last message, for its
        duration (-d), through the agent as with send.
        A line that is not a step is skipped with a warning.

        USAGE: toastkit progress [send options] TITLE [MESSAGE]

        ARGUMENTS:
          TITLE             The toast's title.
          MESSAGE           The message until a step gives one.

        OPTIONS:
          The options of `toastkit send` (see toastkit send --help), except --progress (standard input gives
          it), --wait, --in and --at, actions without --on-action, and a message read from standard input.
          --id ID           The toast to replace (default: a new one for this run).
          --sound SOUND     Played when the task ends (the steps play none).
          --help            Show this help.

        EXAMPLES:
          for i in 25 50 75 100; do sleep 1; echo "$i"; done | toastkit progress -s normal "Backing up"
          (pv -n backup.tar > /media/usb/backup.tar) 2>&1 | toastkit progress -d 10 "Copying" "backup.tar"

        EXIT CODES: those of toastkit send without --wait, for the final toast (see toastkit send --help).

        """

    static let capabilities = """
        OVERVIEW: Print the notification server's capabilities, one per line, then the backend in use and why
        ("backend: ..."). Through the notification portal: what ToastKit sends through a portal of its version, in
        the same words (version 1: actions, body, icon-static).

        USAGE: toastkit [--backend auto|notifications|portal] capabilities [--json]

        ARGUMENTS:
          (none)

        OPTIONS:
          --json            One JSON object: {"capabilities": [...], "backend": ..., "backend_reason": ...}.
          --help            Show this help.

        EXIT CODES: 0 done; 64 usage error; 69 no bus or no notification server.

        """

    static let serverInfo = """
        OVERVIEW: Print the notification server's name, vendor, version and specification version, then the backend
        in use and why; through the notification portal, its name, interface, version and unique name.

        USAGE: toastkit [--backend auto|notifications|portal] server-info [--json]

        ARGUMENTS:
          (none)

        OPTIONS:
          --json            One JSON object.
          --help            Show this help.

        EXIT CODES: 0 done; 64 usage error; 69 no bus or no notification server.

        """

    static let doctor = """
        OVERVIEW: Say in plain words whether a toast can be shown from here, and if not, what to do. It reports
        the session bus and how it was found, the notification server (name, version, process, capabilities), the
        D-Bus service files that name org.freedesktop.Notifications (a warning only when no server runs and the
        one the bus would start cannot start, is not the desktop's, or is one of several in its folder), the
        server's known quirks, Do Not Disturb where it can be read (dunst, GNOME, Plasma, mako, swaync, xfce, MATE,
        LXQt), who plays a toast's sound (a player counts once it has played a moment of silence), the agent, the
        sandbox and the backend, and the portal when it is in use. Nothing is shown; every question has a bound of
        3 s.

        USAGE: toastkit [--backend auto|notifications|portal] doctor [--json]

        ARGUMENTS:
          (none)

        OPTIONS:
          --json            One JSON object: "can_show", "bus", "server" (with "quirks",
                            "do_not_disturb", "sound" and "reply"), "service_files", "agent", "backend", "portal", and
                            "findings" ([{"topic", "level", "text", "fix"}]).
          --help            Show this help.

        OUTPUT: one line per finding, "[ok|note|warning|problem] topic: text", with "→ what to do" below a
        warning or a problem, then "A toast can be shown." or "No toast can be shown."

        EXIT CODES: 0 a toast can be shown (Do Not Disturb may still hold it back: a warning says so); 64 usage
        error; 69 no session bus, no notification server (or portal), or it does not answer.

        """

    static let listen = """
        OVERVIEW: Watch the notification traffic on the session bus, one line per message: Notify calls (with the
        id the server gave), CloseNotification calls, and the ActionInvoked, NotificationClosed and
        ActivationToken signals. Runs until SIGINT or SIGTERM.

        USAGE: toastkit listen [--json]

        ARGUMENTS:
          (none)

        OPTIONS:
          --json            One JSON object per line.
          --help            Show this help.

        EXIT CODES: 0 stopped by SIGINT/SIGTERM; 64 usage error; 69 no bus, or the bus went away.

        """

    static let wait = """
        OVERVIEW: Wait for the end of a toast sent through the agent (`toastkit send --id ID`, or the id printed by
        `send --json`), print it as `send --wait` does (the invoked action's id, or --json events) and exit with
        its code. A toast that ended recently answers at once. SIGINT and SIGTERM stop waiting and leave the
        toast on screen. If the agent stops meanwhile, it is started again and the wait goes on.

        USAGE: toastkit wait --id ID [--json]

        ARGUMENTS:
          (none)

        OPTIONS:
          --id ID           The toast's id.
          --json            One JSON object per line: action, closed, deferred, failed.
          --help            Show this help.

        EXIT CODES: as `send --wait` (0 action, 2 dismissed, 3 expired, 4 closed, 5 deferred); 65 no toast with
        this id is live or ended recently; 69 no bus, or the agent cannot be started; 130/143 interrupted.

        """

    static let list = """
        OVERVIEW: List the toasts scheduled with --in or --at (state scheduled, with the time they are due:
        @17:00:00), the toasts the agent holds, front first (state front, shown or waiting, with the time left
        and the title), then the toasts kept with Later (state kept). Tab-separated: id, state, time, title.
        With no agent running, only the scheduled and the kept ones.

        USAGE: toastkit list [--json]

        ARGUMENTS:
          (none)

        OPTIONS:
          --json            One JSON object per line: id, state, title, status, remaining, running, server_id
                            (and due, in seconds since 1970, for a scheduled one).
          --help            Show this help.

        EXIT CODES: 0 done; 64 usage error; 65 unreadable Later store; 69 the agent failed.

        """

    static let agent = """
        OVERVIEW: The per-user toast agent: one connection to the notification server for every `toastkit
        send` of this user, as org.toastkit.Agent1 on the session bus (docs/agent.md). An application's informing
        toasts stack, three at most, the newest in front with the only running timer; questions, indefinite
        toasts and toasts someone waits for are shown at once. `send` starts it on demand (D-Bus activation, or
        detached); it exits after its idle time with no live toast. Live toasts are saved in
        $XDG_RUNTIME_DIR/toastkit/agent-<bus id>.json before `send` returns: the next agent on the same bus adopts
        them with the time they had left. SIGINT, SIGTERM and SIGHUP save and exit.

        USAGE: toastkit agent [--idle-timeout SECONDS] [--max-visible N] [--replace] [--if-scheduled]

        ARGUMENTS:
          (none)

        OPTIONS:
          --idle-timeout SECONDS
                            Exit after this long with no live toast and no caller (default 60; 0: never).
          --max-visible N   How many toasts of one application are on screen at once, 1 to 10 (default 3;
                            1: one front toast, a queue behind it).
          --replace         Take over from a running agent (it exits; its toasts are adopted).
          --if-scheduled    Start only when you have scheduled toasts, else exit 0 at once (the login's
                            autostart entry, /etc/xdg/autostart/toastkit-reminders.desktop).
          --help            Show this help.

        The config file $XDG_CONFIG_HOME/toastkit/agent.conf (~/.config/toastkit/agent.conf) takes the same
        settings, one `key = value` a line (max-visible, idle-timeout; # starts a comment); the options win.

        EXIT CODES: 0 stopped (idle, signal, replaced, or another agent already runs); 64 usage error; 65 bad
        config file; 69 no session bus; 74 the state folder cannot be used.

        """
}
