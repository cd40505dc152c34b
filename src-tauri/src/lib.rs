//! `fabric-companion`: the dashboard window behind the tray's "Open Dashboard…". It opens its
//! window at start and exits when the window closes (so the tray's idle memory is never held
//! by a webview). One instance only: a second start focuses the first. Started from the app
//! menu with no tray running, it starts the tray (detached).
//!
//! Modules: `commands` (what the page calls), `watch` (live events), `log_tail`, `services`
//! (descriptor validation and probes), `desktop` (tray, autostart, test notification),
//! `open_request` (`--view hooks --host <host>`, at start or handed over by a second start),
//! `remotes` (the remotes the tray follows, as it saved them), `remote_setup` (a remote's
//! "Set up…" and "Take down…": its plan shown, applied on the person's click).
//! Nothing here logs message content, user file paths, branch names or prompts.

#[cfg(test)]
mod bindings;
pub mod commands;
pub mod desktop;
pub mod error;
pub mod log_tail;
pub mod open_request;
pub mod remote_setup;
pub mod remotes;
pub mod services;
pub mod watch;

use std::sync::{Arc, Mutex};

use tauri::{Emitter, Manager};

use crate::commands::AppState;
use crate::log_tail::LogTail;

/// Builds and runs the app; returns when the window has closed.
pub fn run() {
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colour only on a terminal: a file or a journal gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
    // A special file where one of ours or a host's should be is read as absent: one line each.
    companion_platform::fsutil::report_skipped_with(|name, special| {
        tracing::warn!("{name} is {special}; read as absent");
    });
    let Some(paths) = companion_platform::paths::Paths::from_env() else {
        eprintln!("fabric-companion: cannot find the home folder; set HOME");
        std::process::exit(2);
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let open = match open_request::parse(&args) {
        Ok(open) => open,
        Err(error) => {
            eprintln!("fabric-companion: {error}");
            std::process::exit(2);
        }
    };
    desktop::ensure_tray(&paths);
    let tail = Arc::new(Mutex::new(LogTail::new(&paths.hook_log())));
    let state = AppState {
        paths: paths.clone(),
        tail: tail.clone(),
        open: Mutex::new(open),
    };
    let result = tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, args, _cwd| {
            if let Some(window) = app.get_webview_window("main") {
                let _ = window.unminimize();
                let _ = window.show();
                let _ = window.set_focus();
            }
            // A second start with --view hands its request over (its own errors it printed).
            if let Ok(Some(open)) = open_request::parse(args.get(1..).unwrap_or_default()) {
                let _ = app.emit("open-request", open);
            }
        }))
        .manage(state)
        .invoke_handler(tauri::generate_handler![
            commands::get_status,
            commands::plan_hooks,
            commands::apply_hooks,
            commands::read_log,
            commands::list_services,
            commands::get_settings,
            commands::save_settings,
            commands::offer_hooks_again,
            commands::send_test_notification,
            commands::take_open_request,
            commands::focus_session,
            commands::desktop_support,
            commands::enable_jump_extension,
            remote_setup::prepare_remote,
            remote_setup::apply_remote,
            remote_setup::plan_remote_removal,
            remote_setup::take_down_remote,
        ])
        .setup(move |app| {
            watch::start(app.handle().clone(), paths, tail);
            Ok(())
        })
        .run(tauri::generate_context!());
    if let Err(e) = result {
        eprintln!("fabric-companion: {e}");
        std::process::exit(1);
    }
}
