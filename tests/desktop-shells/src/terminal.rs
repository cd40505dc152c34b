//! Real terminal windows in a session: foot (one window per process), kitty (tabs, its
//! remote control on a socket of the session, `socket-only`), konsole (one window per
//! process with `--separate`).

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
