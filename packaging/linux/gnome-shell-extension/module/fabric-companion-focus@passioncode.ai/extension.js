// Fabric Companion: jump to a session (GNOME Shell 45 and later: an ES module; GNOME 40–44
// load ../legacy's script instead, and the package installs the one the shell loads).
//
// Owns one D-Bus object on the shell's own session-bus connection (so its address is
// org.gnome.Shell, /ai/passioncode/FabricCompanion/Focus): ActivateProcess activates the
// most recently used normal window of the first of the given processes that has one (its
// workspace first, as the shell's own switcher does) and says whether it got the focus;
// FocusedProcess says which process owns the focused window. Only a caller running as the
// same user as the shell is answered. Nothing is drawn, stored or logged; a window is known
// here by its process id and its WM class only (never its title). enable() may run twice
// without disable() between (GNOME 48 did so when extensions were turned on while it was
// starting): the object is exported once.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import Meta from 'gi://Meta';
import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';

// ---- the shared core (the same text in both variants; a test compares them) ----
const OBJECT_PATH = '/ai/passioncode/FabricCompanion/Focus';
const VERSION = 1;
const FOCUS_WAIT_MS = 500;

const IFACE = `<node>
  <interface name="ai.passioncode.FabricCompanion.Focus1">
    <method name="ActivateProcess">
      <arg type="au" name="pids" direction="in"/>
      <arg type="u" name="pid" direction="out"/>
      <arg type="s" name="wm_class" direction="out"/>
      <arg type="b" name="focused" direction="out"/>
    </method>
    <method name="FocusedProcess">
      <arg type="u" name="pid" direction="out"/>
    </method>
    <property name="Version" type="u" access="read"/>
  </interface>
</node>`;

// The normal windows on every workspace, most recently used first.
function windows() {
    return global.display.get_tab_list(Meta.TabList.NORMAL_ALL, null)
        .filter(w => !w.is_override_redirect());
}

// The most recently used window of the first of `pids` that owns one.
function windowOf(pids) {
    const all = windows();
    for (const pid of pids) {
        const win = all.find(w => w.get_pid() === pid);
        if (win)
            return win;
    }
    return null;
}

// Resolves when `win` has the focus, or after FOCUS_WAIT_MS.
function focusOf(win) {
    return new Promise(resolve => {
        if (global.display.focus_window === win) {
            resolve(true);
            return;
        }
        let timeoutId = 0;
        const signalId = global.display.connect('notify::focus-window', () => {
            if (global.display.focus_window !== win)
                return;
            global.display.disconnect(signalId);
            GLib.source_remove(timeoutId);
            resolve(true);
        });
        timeoutId = GLib.timeout_add(GLib.PRIORITY_DEFAULT, FOCUS_WAIT_MS, () => {
            global.display.disconnect(signalId);
            resolve(global.display.focus_window === win);
            return GLib.SOURCE_REMOVE;
        });
    });
}

// Whether the caller of `invocation` runs as the shell's own user.
function sameUser(invocation) {
    return new Promise(resolve => {
        invocation.get_connection().call('org.freedesktop.DBus', '/org/freedesktop/DBus',
            'org.freedesktop.DBus', 'GetConnectionUnixUser',
            new GLib.Variant('(s)', [invocation.get_sender()]), new GLib.VariantType('(u)'),
            Gio.DBusCallFlags.NONE, -1, null, (connection, result) => {
                try {
                    const [uid] = connection.call_finish(result).deepUnpack();
                    resolve(uid === new Gio.Credentials().get_unix_user());
                } catch (e) {
                    resolve(false);
                }
            });
    });
}

class FocusService {
    async ActivateProcessAsync([pids], invocation) {
        if (!await sameUser(invocation)) {
            invocation.return_dbus_error('org.freedesktop.DBus.Error.AccessDenied',
                'only the session\'s own user may ask');
            return;
        }
        const win = windowOf(pids);
        if (!win) {
            invocation.return_value(new GLib.Variant('(usb)', [0, '', false]));
            return;
        }
        Main.activateWindow(win);
        const focused = await focusOf(win);
        invocation.return_value(new GLib.Variant('(usb)',
            [win.get_pid(), win.get_wm_class() || '', focused]));
    }

    async FocusedProcessAsync(_params, invocation) {
        if (!await sameUser(invocation)) {
            invocation.return_dbus_error('org.freedesktop.DBus.Error.AccessDenied',
                'only the session\'s own user may ask');
            return;
        }
        const win = global.display.focus_window;
        const pid = win ? win.get_pid() : 0;
        invocation.return_value(new GLib.Variant('(u)', [pid > 0 ? pid : 0]));
    }

    get Version() {
        return VERSION;
    }
}

// The exported object, at most one (enable() twice in a row must not export twice: the
// shell then fails with "An object is already exported").
let exported = null;

function exportOnce() {
    unexport();
    exported = Gio.DBusExportedObject.wrapJSObject(IFACE, new FocusService());
    exported.export(Gio.DBus.session, OBJECT_PATH);
}

function unexport() {
    if (exported) {
        exported.unexport();
        exported = null;
    }
}
// ---- end of the shared core ----

export default class FabricCompanionFocus extends Extension {
    enable() {
        exportOnce();
    }

    disable() {
        unexport();
    }
}
