//! `fabric-tray-xembed`: the tray with the tray-icon shell (GTK: AppIndicator or XEmbed),
//! which `fabric-tray` becomes on a Linux desktop that has an XEmbed tray and no
//! StatusNotifierWatcher. A program of its own so that `fabric-tray` never loads GTK.

fn main() -> std::process::ExitCode {
    fabric_tray::run(fabric_tray::app::Launch::TrayIcon(
        fabric_tray::shell::run_loop,
    ))
}
