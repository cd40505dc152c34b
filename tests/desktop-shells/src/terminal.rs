//! Real terminal windows in a session: foot (one window per process), kitty (tabs, its
//! remote control on a socket of the session, `socket-only`), konsole (one window per
//! process with `--separate`), GNOME Terminal (its server started by the test, tabs opened
//! by its client; which tab is current read from its window's `active-tab` action).

use std::path::{Path, PathBuf};

use crate::session::Session;

/// A foot window running `sh <script>`; the foot process's pid.
pub fn foot(session: &mut Session, name: &str, script: &Path) -> u32 {
    let mut foot = session.command("foot");
    foot.args(["--title", name, "sh"]).arg(script);
    session.spawn(name, foot)
}

/// A kitty window with one tab per script (tab `i` titled by its name), remote control on
/// the session's socket; the kitty process's pid and the socket's address (`unix:…`).
pub fn kitty_tabs(session: &mut Session, name: &str, tabs: &[(&str, PathBuf)]) -> (u32, String) {
    let socket = session.runtime_dir().join(format!("{name}.sock"));
    let address = format!("unix:{}", socket.display());
    let mut layout = String::new();
    for (title, script) in tabs {
        layout.push_str(&format!(
            "new_tab {title}\nlaunch sh {}\n",
            script.display()
        ));
    }
    let file = session.home().join(format!("{name}.kitty-session"));
    std::fs::write(&file, layout).unwrap();
    let mut kitty = session.command("kitty");
    kitty
        .args([
            "-o",
            "allow_remote_control=socket-only",
            "--listen-on",
            &address,
        ])
        .arg("--session")
        .arg(&file);
    let pid = session.spawn(name, kitty);
    (pid, address)
}

/// `kitty @ --to <address> ls`, parsed.
pub fn kitty_ls(session: &Session, address: &str) -> serde_json::Value {
    let out = session
        .command("kitty")
        .args(["@", "--to", address, "ls"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null)
}

/// The title of kitty's focused tab (in its focused OS window).
pub fn kitty_active_tab(session: &Session, address: &str) -> Option<String> {
    let ls = kitty_ls(session, address);
    let windows = ls.as_array()?;
    // The focused or last active OS window; kitty 0.39 (Debian 13) marks neither while
    // another program's window has the focus: then its only OS window.
    let marked: Vec<&serde_json::Value> = windows
        .iter()
        .filter(|os| os["is_focused"] == true || os["is_active"] == true)
        .collect();
    let chosen = if marked.is_empty() && windows.len() == 1 {
        windows.iter().collect()
    } else {
        marked
    };
    chosen
        .into_iter()
        .flat_map(|os| os["tabs"].as_array().cloned().unwrap_or_default())
        .find(|tab| {
            tab["is_active_tab"] == true || tab["is_active"] == true || tab["is_focused"] == true
        })
        .and_then(|tab| tab["title"].as_str().map(str::to_string))
}

/// A konsole window (its own process) running `sh <script>`; konsole's pid.
pub fn konsole(session: &mut Session, name: &str, script: &Path) -> u32 {
    let mut konsole = session.command("konsole");
    konsole
        .args([
            "--separate",
            "--nofork",
            "-p",
            &format!("tabtitle={name}"),
            "-e",
            "sh",
        ])
        .arg(script)
        .env("QT_QPA_PLATFORM", "wayland");
    session.spawn(name, konsole)
}

/// GNOME Terminal's server (`/usr/libexec/gnome-terminal-server`), started in the session
/// (not by bus activation, so it ends with the session), and its unique bus name once it owns
/// `org.gnome.Terminal`; the server's pid.
pub fn gnome_terminal_server(session: &mut Session) -> (u32, String) {
    // Its shell integration on, as a person turns it on (Debian 12's default is off; the
    // search provider the jump asks exists only with it).
    let out = session
        .command("gsettings")
        .args([
            "set",
            "org.gnome.Terminal.Legacy.Settings",
            "shell-integration-enabled",
            "true",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "gsettings: {out:?}");
    let server = session.command(GNOME_TERMINAL_SERVER);
    let pid = session.spawn("gnome-terminal-server", server);
    let owner = crate::wait_until("GNOME Terminal's server on the bus", crate::WAIT, || {
        session.name_owner("org.gnome.Terminal")
    });
    (pid, owner)
}

/// Where Debian puts GNOME Terminal's server.
pub const GNOME_TERMINAL_SERVER: &str = "/usr/libexec/gnome-terminal-server";

/// `gnome-terminal <how> -- sh <script>` through the running server: `--window`, a new
/// window; `--tab` with `beside` (the server's unique name and a screen's uuid), a tab in
/// that screen's window, as `gnome-terminal --tab` typed in that tab does (`terminal.cc`,
/// `get_factory_for_options`: the parent screen counts only with `GNOME_TERMINAL_SERVICE`).
pub fn gnome_terminal_open(
    session: &Session,
    how: &str,
    script: &Path,
    beside: Option<(&str, &str)>,
) {
    let mut command = session.command("gnome-terminal");
    command.args([how, "--", "sh"]).arg(script);
    if let Some((service, screen)) = beside {
        command.env("GNOME_TERMINAL_SERVICE", service).env(
            "GNOME_TERMINAL_SCREEN",
            format!("/org/gnome/Terminal/screen/{}", screen.replace('-', "_")),
        );
    }
    let out = command.output().unwrap();
    assert!(out.status.success(), "gnome-terminal {how}: {out:?}");
}

/// The position of the current tab of GNOME Terminal's window `n` (`/org/gnome/Terminal/
/// window/<n>`): the state of its `active-tab` action (`terminal-window.cc`), read with
/// `org.gtk.Actions.Describe`.
pub fn gnome_terminal_active_tab(session: &Session, n: u32) -> Option<i32> {
    let bus = session.bus().clone();
    session.block_on(async move {
        let reply = bus
            .call_method(
                Some("org.gnome.Terminal"),
                format!("/org/gnome/Terminal/window/{n}").as_str(),
                Some("org.gtk.Actions"),
                "Describe",
                &("active-tab",),
            )
            .await
            .ok()?;
        let (_enabled, _signature, state): (bool, zbus::Signature, Vec<zbus::OwnedVariant>) =
            reply.body().deserialize().ok()?;
        i32::try_from(state.first()?).ok()
    })
}
