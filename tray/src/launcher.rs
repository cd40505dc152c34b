//! Starting other programs without keeping them: the dashboard (`fabric-companion`) and the
//! hook log's viewer. On Unix a program is started detached (double fork, `setsid`, no
//! inherited standard streams), so it is not our waited child and outlives the tray.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The dashboard's program name.
pub const COMPANION: &str = "fabric-companion";
/// The variable that names the dashboard's program.
pub const COMPANION_ENV: &str = "FABRIC_COMPANION_BIN";

fn exe_name(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

/// Finds a program: `$<env>` when set, else next to our own executable, else on `PATH`.
pub fn find_program(env: &str, name: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(env).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let file = exe_name(name);
    if let Some(beside) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(&file)))
        .filter(|p| p.is_file())
    {
        return Some(beside);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(&file))
        .find(|p| p.is_file())
}

/// The dashboard's program.
pub fn companion_program() -> Option<PathBuf> {
    find_program(COMPANION_ENV, COMPANION)
}

/// Starts `program` with `args`, detached. Returns once it has been started.
pub fn spawn_detached(program: &Path, args: &[&OsStr]) -> std::io::Result<()> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: only async-signal-safe calls (fork, _exit, setsid) run between fork and exec.
        unsafe {
            command.pre_exec(|| {
                match libc::fork() {
                    -1 => return Err(std::io::Error::last_os_error()),
                    0 => {}
                    _ => libc::_exit(0),
                }
                libc::setsid();
                Ok(())
            });
        }
    }
    let mut child = command.spawn()?;
    // The intermediate process exits at once (Unix); reap it so it leaves no zombie.
    #[cfg(unix)]
    let _ = child.wait();
    #[cfg(not(unix))]
    drop(child);
    Ok(())
}

/// Opens the dashboard. Errors say what was missing.
pub fn open_dashboard() -> std::io::Result<PathBuf> {
    let program = companion_program().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{COMPANION} not found (${COMPANION_ENV}, beside fabric-tray, or on PATH)"),
        )
    })?;
    spawn_detached(&program, &[])?;
    Ok(program)
}

/// Opens a file with the desktop's default application.
pub fn open_file(path: &Path) -> std::io::Result<()> {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    spawn_detached(Path::new(opener), &[path.as_os_str()])
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_detached_program_is_not_our_child_and_runs_in_its_own_session() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let script = format!(
            "echo $$ $PPID $(ps -o sid= -p $$) > {0}.tmp && mv {0}.tmp {0}",
            out.display()
        );
        spawn_detached(Path::new("sh"), &[OsStr::new("-c"), OsStr::new(&script)]).unwrap();
        let start = std::time::Instant::now();
        while !out.exists() {
            assert!(start.elapsed().as_secs() < 20, "the program did not run");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let text = std::fs::read_to_string(&out).unwrap();
        let fields: Vec<u32> = text
            .split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect();
        assert_ne!(fields[1], std::process::id(), "not our child");
        assert_eq!(fields[2], fields[0], "a session leader");
    }

    #[test]
    fn a_missing_program_is_an_error() {
        assert!(spawn_detached(Path::new("/nonexistent/program"), &[]).is_err());
    }

    #[test]
    fn the_variable_wins() {
        // Only reads the variable when set; no process-wide mutation in a test.
        assert!(find_program("FABRIC_TRAY_TEST_UNSET_VARIABLE", "no-such-program-xyz").is_none());
    }
}
