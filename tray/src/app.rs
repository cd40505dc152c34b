//! The tray program's entry: its command line, logging, the one-tray lock, the stable copy
//! of `fabric-session`, and which shell runs.
//!
//! On Linux the shell is picked at start: where a StatusNotifierWatcher owns its name on the
//! session bus, the GTK-free StatusNotifierItem ([`crate::sni`]); where only an XEmbed tray
//! manager runs, the tray-icon/GTK shell, which lives in its own program
//! (`fabric-tray-xembed`) so that `fabric-tray` itself never loads GTK. Elsewhere the
//! tray-icon shell ([`crate::shell`]).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use companion_desktop::programs::{self, Program, Search};
use companion_desktop::tray_lock;
use companion_hosts::stable_binary::{self, CopyOutcome};
use companion_platform::paths::Paths;

use crate::{icon, tray_host};

/// Fabric Companion's tray: unread counts, sessions, hook status and notifications.
#[derive(Debug, Parser)]
#[command(name = "fabric-tray", version, about)]
struct Cli {
    /// Write the tray and app icons as PNG files into DIR, then exit.
    #[arg(long, value_name = "DIR", hide = true)]
    render_icons: Option<PathBuf>,
}

/// A shell's loop: runs the tray until Quit.
pub type ShellLoop = fn(Paths) -> anyhow::Result<()>;

/// How a program starts the tray.
#[derive(Debug, Clone, Copy)]
pub enum Launch {
    /// `fabric-tray`: picks the shell, then runs it. `tray_icon` is the tray-icon shell when
    /// this program carries it (macOS, Windows); on Linux it does not, and that shell is the
    /// program `fabric-tray-xembed`, which this one becomes when that shell is picked.
    Pick { tray_icon: Option<ShellLoop> },
    /// `fabric-tray-xembed`: the tray-icon shell, picked already.
    TrayIcon(ShellLoop),
}

/// Which shell draws the tray.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shell {
    /// tray-icon (GTK on Linux: AppIndicator or XEmbed; AppKit; Win32).
    TrayIcon,
    /// A StatusNotifierItem over D-Bus, no GTK (Linux and the BSDs).
    StatusNotifierItem,
}

/// The name of the Linux program that runs the tray-icon shell.
pub const XEMBED_PROGRAM: &str = "fabric-tray-xembed";

/// The tray's entry point (both programs').
pub fn run(launch: Launch) -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        // Colour only on a terminal: a file or a journal gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FABRIC_TRAY_LOG").unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new("info,rmcp=warn,notify=warn")
            }),
        )
        .init();
    // A special file where one of ours or a host's should be is read as absent: one line each.
    companion_platform::fsutil::report_skipped_with(|name, special| {
        tracing::warn!("{name} is {special}; read as absent");
    });
    if let Some(dir) = cli.render_icons {
        return match icon::render_all(&dir) {
            Ok(files) => {
                for file in files {
                    println!("{}", file.display());
                }
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("fabric-tray: cannot write icons: {error}");
                ExitCode::FAILURE
            }
        };
    }
    let shell_loop = match launch {
        Launch::TrayIcon(shell_loop) => shell_loop,
        Launch::Pick { tray_icon } => match (pick_shell(), tray_icon) {
            (Shell::TrayIcon, Some(shell_loop)) => shell_loop,
            (Shell::TrayIcon, None) => become_xembed(),
            (Shell::StatusNotifierItem, _) => item_loop(),
        },
    };
    let Some(paths) = Paths::from_env() else {
        eprintln!("fabric-tray: no home folder is known");
        return ExitCode::FAILURE;
    };
    let lock_path = tray_lock::lock_path(&paths);
    let _lock = match tray_lock::acquire(&lock_path) {
        Ok(lock) => lock,
        Err(tray_lock::LockError::Held(path)) => {
            eprintln!(
                "fabric-tray: another fabric-tray is already running (lock {}); exiting",
                path.display()
            );
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("fabric-tray: {error}");
            return ExitCode::FAILURE;
        }
    };
    install_stable_binary(&paths);
    match shell_loop(paths) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("fabric-tray: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Copies `fabric-session` to the stable path hooks point at (first start and upgrades):
/// the one shipped beside the tray (or `$FABRIC_SESSION_BIN`), never one from `PATH`. The
/// package's tray makes no copy: its hooks run the package's own program.
fn install_stable_binary(paths: &Paths) {
    if let Some(packaged) = stable_binary::packaged_program() {
        tracing::info!(program = %packaged.display(), "installed from the package: no stable copy");
        return;
    }
    let source = match programs::find(Program::Session, Search::BesideOnly) {
        Ok(source) => source,
        Err(error) => {
            tracing::info!(%error, "the stable copy of fabric-session is left as is");
            return;
        }
    };
    let stable = paths.stable_binary();
    match stable_binary::ensure_copy(&source, &stable) {
        Ok(CopyOutcome::Unchanged) => {}
        Ok(outcome) => {
            tracing::info!(?outcome, stable = %stable.display(), "fabric-session copied")
        }
        Err(error) => {
            tracing::warn!(%error, stable = %stable.display(), "cannot copy fabric-session")
        }
    }
}

/// Linux: a StatusNotifierWatcher gets the GTK-free item; an XEmbed tray manager alone gets
/// the GTK shell. A panel starting with the session may come up after us: with neither yet,
/// look again for a few seconds, then take the item (it registers whenever a watcher
/// appears). Other systems: tray-icon.
fn pick_shell() -> Shell {
    if !cfg!(all(unix, not(target_os = "macos"))) {
        return Shell::TrayIcon;
    }
    for _ in 0..10 {
        if tray_host::sni_watcher_present() {
            return Shell::StatusNotifierItem;
        }
        if tray_host::xembed_tray_present() {
            return Shell::TrayIcon;
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    Shell::StatusNotifierItem
}

#[cfg(all(unix, not(target_os = "macos")))]
fn item_loop() -> ShellLoop {
    crate::sni::run_loop
}

#[cfg(not(all(unix, not(target_os = "macos"))))]
fn item_loop() -> ShellLoop {
    unreachable!("the StatusNotifierItem shell is only picked on Linux and the BSDs")
}

/// Replaces this process with `fabric-tray-xembed` (same arguments); where that program is
/// missing or cannot start, says so and keeps the item shell.
fn become_xembed() -> ShellLoop {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        match xembed_program() {
            Some(program) => {
                tracing::info!(program = %program.display(), "an XEmbed tray only: the GTK shell");
                // Named fabric-tray still (GTK's program name and window class come from it).
                let mut command = std::process::Command::new(&program);
                command
                    .arg0("fabric-tray")
                    .args(std::env::args_os().skip(1));
                // GDK probes GLX at start, which maps the GL driver (Mesa's llvmpipe with
                // libLLVM: 29 MB); a tray icon draws nothing with GL. The programs the tray
                // starts get the variable taken out again (`launcher`).
                if std::env::var_os("GDK_GL").is_none() {
                    command
                        .env("GDK_GL", "disable")
                        .env(crate::launcher::GDK_GL_SET_BY_TRAY, "1");
                }
                let error = command.exec();
                tracing::warn!(%error, program = %program.display(), "cannot start the GTK shell");
            }
            None => tracing::warn!("{XEMBED_PROGRAM} is not installed beside fabric-tray"),
        }
    }
    eprintln!(
        "fabric-tray: this desktop has only an XEmbed tray and {XEMBED_PROGRAM} cannot run; \
         showing a StatusNotifierItem instead, which needs a StatusNotifierWatcher"
    );
    item_loop()
}

/// Where `fabric-tray-xembed` is: beside us (a build folder, a bundle), or in the Linux
/// package's folder of helper programs.
#[cfg(unix)]
fn xembed_program() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    [
        exe.parent()?.join(XEMBED_PROGRAM),
        std::path::Path::new(stable_binary::PACKAGED_HELPER_DIR).join(XEMBED_PROGRAM),
    ]
    .into_iter()
    .find(|candidate| candidate.is_file())
}
