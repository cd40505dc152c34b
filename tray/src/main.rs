//! `fabric-tray`: Fabric Companion's always-on tray process.

fn main() -> std::process::ExitCode {
    fabric_tray::run()
}
