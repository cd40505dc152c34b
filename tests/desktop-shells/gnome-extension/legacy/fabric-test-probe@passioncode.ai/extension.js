// Test only, never shipped (tests/desktop-shells; GNOME Shell 40–44; ../module is the same
// probe for 45+): exports
// ai.passioncode.FabricCompanion.TestProbe at /ai/passioncode/FabricCompanion/TestProbe on
// the shell's own connection (address: org.gnome.Shell), so the tests read back what the
// shell itself holds: the AppIndicator items in the top bar (their readiness, size, icon
// pixels' digest, menu), when each item's icon actor changed, the message tray's sources
// and notifications, the focused window; and act as a person does: activate a menu item or
// a notification, take a screenshot of an area. Every answer is a JSON string.
/* exported init */

const { Clutter, Gio, GLib, Meta, Shell } = imports.gi;
const Main = imports.ui.main;

const PATH = '/ai/passioncode/FabricCompanion/TestProbe';
const IFACE = `<node>
  <interface name="ai.passioncode.FabricCompanion.TestProbe">
    <method name="Eval"><arg type="s" direction="in"/><arg type="s" direction="out"/></method>
    <method name="PanelItems"><arg type="s" direction="out"/></method>
    <method name="IconChanges"><arg type="s" direction="out"/></method>
    <method name="MenuItems"><arg type="s" direction="in" name="key"/><arg type="s" direction="out"/></method>
    <method name="ActivateMenuItem"><arg type="s" direction="in" name="key"/><arg type="s" direction="in" name="label"/><arg type="s" direction="out"/></method>
    <method name="Notifications"><arg type="s" direction="out"/></method>
    <method name="ActivateNotification"><arg type="s" direction="in" name="title"/><arg type="s" direction="out"/></method>
    <method name="Focused"><arg type="s" direction="out"/></method>
    <method name="Windows"><arg type="s" direction="out"/></method>
    <method name="Screenshot"><arg type="i" direction="in"/><arg type="i" direction="in"/><arg type="i" direction="in"/><arg type="i" direction="in"/><arg type="s" direction="in" name="path"/><arg type="s" direction="out"/></method>
  </interface>
</node>`;

const json = value => JSON.stringify(value === undefined ? null : value);

function sha256(bytes) {
    return GLib.compute_checksum_for_data(GLib.ChecksumType.SHA256, bytes);
}

// The digest of each IconPixmap entry the indicator holds: [[w, h, sha256], ...].
function pixmapDigests(indicator) {
    const variant = indicator && indicator._proxy && indicator._proxy.get_cached_property('IconPixmap');
    if (!variant)
        return [];
    return variant.deepUnpack().map(([w, h, bytes]) => [w, h, sha256(bytes)]);
}

function appIndicators() {
    return Object.entries(Main.panel.statusArea)
        .filter(([key, item]) => key.startsWith('appindicator-') && item);
}

// Every change of an item's icon actor, with the time (GLib real time, microseconds).
const iconChanges = [];
const watched = new Set();

function watchIcons() {
    for (const [key, item] of appIndicators()) {
        if (watched.has(item) || !item._icon)
            continue;
        watched.add(item);
        const record = () => iconChanges.push({
            key, at: GLib.get_real_time(), digests: pixmapDigests(item._indicator),
        });
        item._icon.connect('notify::gicon', record);
        // AppIndicator 59+ draws an item's pixmap as the actor's content, without a gicon.
        if ('content' in item._icon)
            item._icon.connect('notify::content', record);
        record();
    }
}

function menuItemsOf(item) {
    return item.menu._getMenuItems().map(m => ({
        label: m.label ? m.label.get_text() : '',
        sensitive: m.sensitive !== undefined ? m.sensitive : true,
        submenu: m.menu && m.menu !== item.menu
            ? m.menu._getMenuItems().map(s => ({
                label: s.label ? s.label.get_text() : '',
                sensitive: s.sensitive,
            })) : null,
    }));
}

function findMenuItem(menu, label) {
    for (const m of menu._getMenuItems()) {
        if (m.label && m.label.get_text() === label)
            return m;
        if (m.menu && m.menu !== menu) {
            const inner = findMenuItem(m.menu, label);
            if (inner)
                return inner;
        }
    }
    return null;
}

function giconInfo(gicon) {
    if (!gicon)
        return null;
    const info = { type: gicon.constructor.$gtype ? gicon.constructor.$gtype.name : String(gicon) };
    if (gicon.get_width) {
        info.width = gicon.get_width();
        info.height = gicon.get_height();
        info.sha256 = sha256(gicon.get_pixels());
        info.rowstride = gicon.get_rowstride();
        info.hasAlpha = gicon.get_has_alpha();
    }
    if (gicon.to_string)
        info.string = gicon.to_string();
    return info;
}

// A source's icon: its app's, or the one its notifications brought (GNOME's own
// getIcon() throws for sources without an icon name).
function sourceIcon(source) {
    if (source.app)
        return source.app.get_icon();
    if (source._gicon)
        return source._gicon;
    try {
        return source.getIcon();
    } catch (e) {
        return null;
    }
}

class Probe {
    Eval(code) {
        try {
            // eslint-disable-next-line no-eval
            return json({ ok: true, value: eval(code) });
        } catch (e) {
            return json({ ok: false, error: `${e}\n${e.stack}` });
        }
    }

    PanelItems() {
        watchIcons();
        return json(appIndicators().map(([key, item]) => {
            const indicator = item._indicator;
            const [x, y] = item.get_transformed_position();
            return {
                key,
                uniqueId: indicator ? indicator.uniqueId : null,
                busName: indicator ? indicator.busName : null,
                id: indicator ? indicator.id : null,
                ready: indicator ? !!indicator.isReady : false,
                nameWatcher: !!(indicator && indicator._nameWatcher),
                visible: item.visible,
                mapped: item.mapped,
                x, y, width: item.width, height: item.height,
                hasIcon: !!(item._icon && (item._icon.gicon || item._icon.content)),
                pixmaps: pixmapDigests(indicator),
                menu: item.menu ? menuItemsOf(item) : [],
            };
        }));
    }

    IconChanges() {
        watchIcons();
        return json(iconChanges);
    }

    MenuItems(key) {
        const item = Main.panel.statusArea[key];
        return json(item ? menuItemsOf(item) : null);
    }

    ActivateMenuItem(key, label) {
        const item = Main.panel.statusArea[key];
        if (!item)
            return json({ ok: false, error: 'no such item' });
        item.menu.open();
        const entry = findMenuItem(item.menu, label);
        if (!entry) {
            item.menu.close();
            return json({ ok: false, error: `no item ${label}`, menu: menuItemsOf(item) });
        }
        // As a click ends: the menu item's activation with the button's release event.
        // GNOME 50's Clutter makes no events from JavaScript: there the AppIndicator menu
        // item's own D-Bus click, as its activate handler sends it.
        const time = global.display.get_current_time_roundtrip();
        if (typeof Clutter.Event.new === 'function') {
            const event = Clutter.Event.new(Clutter.EventType.BUTTON_RELEASE);
            event.set_time(time);
            entry.activate(event);
        } else if (entry._dbusItem) {
            // A promise from AppIndicator 66, nothing from 59/60.
            const sent = entry._dbusItem.handleEvent('clicked', GLib.Variant.new('i', 0), time);
            if (sent && sent.catch)
                sent.catch(logError);
        } else {
            item.menu.close();
            return json({ ok: false, error: 'no way to click here' });
        }
        item.menu.close();
        return json({
            ok: true,
            id: entry._dbusItem ? entry._dbusItem.getId() : null,
            sensitive: entry.sensitive,
        });
    }

    Notifications() {
        return json(Main.messageTray.getSources().map(source => ({
            title: source.title,
            icon: giconInfo(sourceIcon(source)),
            app: source.app ? source.app.get_id() : null,
            notifications: source.notifications.map(n => ({
                title: n.title,
                body: n.bannerBodyText !== undefined ? n.bannerBodyText : n.body,
                gicon: giconInfo(n.gicon),
                actions: n.actions ? n.actions.map(a => a.label) : [],
            })),
        })));
    }

    ActivateNotification(title) {
        for (const source of Main.messageTray.getSources()) {
            const n = source.notifications.find(m => m.title === title);
            if (n) {
                n.activate();
                return json({ ok: true });
            }
        }
        return json({ ok: false });
    }

    Focused() {
        const w = global.display.focus_window;
        return json(w ? { pid: w.get_pid(), wmClass: w.get_wm_class(), workspace: w.get_workspace().index() } : null);
    }

    Windows() {
        return json(global.display.get_tab_list(Meta.TabList.NORMAL_ALL, null).map(w => ({
            pid: w.get_pid(), wmClass: w.get_wm_class(),
            workspace: w.get_workspace() ? w.get_workspace().index() : -1,
            focused: w === global.display.focus_window,
        })));
    }

    ScreenshotAsync([x, y, w, h, path], invocation) {
        const file = Gio.File.new_for_path(path);
        const stream = file.replace(null, false, Gio.FileCreateFlags.NONE, null);
        const shooter = new Shell.Screenshot();
        shooter.screenshot_area(x, y, w, h, stream, (o, result) => {
            try {
                shooter.screenshot_area_finish(result);
                stream.close(null);
                invocation.return_value(new GLib.Variant('(s)', [json({ ok: true })]));
            } catch (e) {
                invocation.return_value(new GLib.Variant('(s)', [json({ ok: false, error: `${e}` })]));
            }
        });
    }
}

let exported = null;

function exportOnce() {
    if (exported)
        exported.unexport();
    exported = Gio.DBusExportedObject.wrapJSObject(IFACE, new Probe());
    exported.export(Gio.DBus.session, PATH);
}

function unexport() {
    if (exported) {
        exported.unexport();
        exported = null;
    }
}

class Extension {
    enable() {
        exportOnce();
    }

    disable() {
        unexport();
    }
}

function init() {
    return new Extension();
}
