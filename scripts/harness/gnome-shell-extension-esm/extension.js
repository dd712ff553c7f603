// ToastKit's test extension for a headless GNOME Shell 45 or newer (ES modules) on a private bus: GNOME Shell 48 from
// the Debian 13 chroot (issue 41; Tests/TestSupport starts it). What the GNOME 43 one
// (../gnome-shell-extension/extension.js) does, in the form GNOME 45+ loads:
//
// - Unsafe mode: org.gnome.Shell.Eval and org.gnome.Shell.Screenshot answer (no --unsafe-mode flag any more).
// - Notifications that are not an application's (the shell's own: "Logged in as a privileged user", "Screen Lock
//   disabled", the unsafe-mode warning) go as they come: GNOME shows one banner at a time, and such a banner would
//   hide the test's.
// - The overview the shell starts in is closed, and the session never idles into blanking or locking.
// - Once that is done and the shell has finished starting, it owns org.toastkit.TestShell on the session bus, so the
//   tests await a name instead of polling.
import GLib from 'gi://GLib';
import Gio from 'gi://Gio';
import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';

export default class TestShell extends Extension {
    enable() {
        global.context.unsafe_mode = true;
        try {
            new Gio.Settings({schema_id: 'org.gnome.desktop.session'}).set_uint('idle-delay', 0);
            new Gio.Settings({schema_id: 'org.gnome.desktop.screensaver'}).set_boolean('lock-enabled', false);
        } catch (e) {
            console.log(`toastkit-test-shell: ${e}`);
        }
        this._sources = new Map();
        this._sourceAdded = Main.messageTray.connect('source-added', (_tray, source) => this._silence(source));
        for (const source of Main.messageTray.getSources())
            this._silence(source);
        if (Main.layoutManager._startingUp)
            this._startup = Main.layoutManager.connect('startup-complete', () => this._ready());
        else
            this._ready();
    }

    // The shell's own sources (everything but the freedesktop and GTK notification daemons' application sources).
    _silence(source) {
        const kind = source.constructor.name;
        if (this._sources.has(source) || kind.includes('NotificationDaemon') || kind.includes('AppSource'))
            return;
        const drop = () => {
            for (const notification of [...source.notifications])
                notification.destroy();
        };
        // Dropped on the next idle, not inside the source's signal.
        this._sources.set(source, source.connect('notification-added', () =>
            GLib.idle_add(GLib.PRIORITY_DEFAULT, () => { drop(); return GLib.SOURCE_REMOVE; })));
        drop();
    }

    _ready() {
        for (const source of Main.messageTray.getSources())
            this._silence(source);
        Main.overview.hide();
        this._name = Gio.bus_own_name(Gio.BusType.SESSION, 'org.toastkit.TestShell',
            Gio.BusNameOwnerFlags.NONE, null, null, null);
    }

    disable() {
        if (this._startup)
            Main.layoutManager.disconnect(this._startup);
        if (this._sourceAdded)
            Main.messageTray.disconnect(this._sourceAdded);
        for (const [source, id] of this._sources ?? [])
            source.disconnect(id);
        if (this._name)
            Gio.bus_unown_name(this._name);
        global.context.unsafe_mode = false;
    }
}
