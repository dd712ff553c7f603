// ToastKit's test extension for a headless GNOME Shell 43 on a private bus (Tests/TestSupport starts it).
//
// - Unsafe mode: org.gnome.Shell.Eval and org.gnome.Shell.Screenshot answer (43 has no --unsafe-mode flag).
// - System notifications are dropped ("Logged in as a privileged user" when the tests run as root, the unsafe-mode
//   warning): GNOME shows one banner at a time, and such a banner would hide the test's notification.
// - The overview the shell starts in is closed, and the session never idles into blanking or locking.
// - Once all that is done and the shell has finished starting, it owns org.toastkit.TestShell on the session bus,
//   so the tests await a name instead of polling.
/* exported init */
const { Gio, GLib } = imports.gi;
const Main = imports.ui.main;
const MessageTray = imports.ui.messageTray;

class TestShell {
    enable() {
        global.context.unsafe_mode = true;
        try {
            new Gio.Settings({ schema_id: 'org.gnome.desktop.session' }).set_uint('idle-delay', 0);
            new Gio.Settings({ schema_id: 'org.gnome.desktop.screensaver' }).set_boolean('lock-enabled', false);
        } catch (e) {
            log(`toastkit-test-shell: ${e}`);
        }
        // Later system banners go too; destroyed once added, on the next idle (not inside the tray's signal).
        this._sourceAdded = Main.messageTray.connect('source-added', (_tray, source) => {
            if (source instanceof MessageTray.SystemNotificationSource)
                GLib.idle_add(GLib.PRIORITY_DEFAULT, () => { source.destroy(); return GLib.SOURCE_REMOVE; });
        });
        if (Main.layoutManager._startingUp)
            this._startup = Main.layoutManager.connect('startup-complete', () => this._ready());
        else
            this._ready();
    }

    _ready() {
        for (const source of Main.messageTray.getSources()) {
            if (source instanceof MessageTray.SystemNotificationSource)
                source.destroy();
        }
        Main.overview.hide();
        this._name = Gio.bus_own_name(Gio.BusType.SESSION, 'org.toastkit.TestShell',
            Gio.BusNameOwnerFlags.NONE, null, null, null);
    }

    disable() {
        if (this._startup)
            Main.layoutManager.disconnect(this._startup);
        if (this._sourceAdded)
            Main.messageTray.disconnect(this._sourceAdded);
        if (this._name)
            Gio.bus_unown_name(this._name);
        global.context.unsafe_mode = false;
    }
}

function init() {
    return new TestShell();
}
