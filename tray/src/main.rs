//! `fabric-tray`: Fabric Companion's always-on tray process. On Linux it carries only the
//! GTK-free StatusNotifierItem shell (the GTK one is `fabric-tray-xembed`).

use fabric_tray::app::Launch;

fn main() -> std::process::ExitCode {
    #[cfg(all(unix, not(target_os = "macos")))]
    let launch = Launch::Pick { tray_icon: None };
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    let launch = Launch::Pick {
        tray_icon: Some(fabric_tray::shell::run_loop),
    };
    fabric_tray::run(launch)
}
