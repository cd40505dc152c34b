//! Facts about processes: whether a pid is alive, a process's parent, name, command line and
//! start time, and the host process that ran this hook.
//!
//! Each OS answers natively, never by starting a program (a hook must not spawn `ps`):
//! Linux reads `/proc` ([`linux`]), macOS asks libproc and sysctl ([`macos`]), Windows the
//! Win32 and NT process APIs ([`windows`]). This file holds what is the same everywhere.

mod parse;

#[cfg(not(any(target_os = "macos", windows)))]
#[path = "process/linux.rs"]
mod sys;
#[cfg(target_os = "macos")]
#[path = "process/macos.rs"]
mod sys;
#[cfg(windows)]
#[path = "process/windows.rs"]
mod sys;

/// Whether a process with this pid exists and has not exited. A zombie (exited, not yet
/// reaped; on Windows, exited but still held open) is not alive.
pub fn pid_alive(pid: u32) -> bool {
    sys::pid_alive(pid)
}

/// Whether the pid exists, by signal 0 (a permission error still means it exists). A zombie
/// exists too: each Unix backend adds its own zombie check on top.
#[cfg(unix)]
fn pid_exists(pid: u32) -> bool {
    let Ok(raw) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if raw <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 sends nothing; it only checks that the pid exists.
    let rc = unsafe { libc::kill(raw, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// What we know of one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    pub pid: u32,
    /// The parent's pid; 0 where unknown (on Windows also when the parent has exited and its
    /// number now belongs to a younger process).
    pub parent: u32,
    /// The program's short name: the kernel's `comm` on Linux, the executable's file name on
    /// macOS, the executable's file name without `.exe`, lowercased, on Windows.
    pub name: String,
    /// A one-letter state (`R`, `S`, `Z`, …; on Windows `R` or `Z`); `?` where unknown.
    pub state: char,
    /// When the process started, in the OS's own unit (Linux: clock ticks since boot; macOS:
    /// microseconds since the Unix epoch; Windows: 100 ns since 1601). Only ever compared
    /// with another reading on the same machine, to tell a reused pid from the same process.
    pub start_ticks: u64,
}

/// Reads a process's parent, name, state and start time.
pub fn process_info(pid: u32) -> Option<ProcessInfo> {
    sys::process_info(pid)
}

/// A process's command line, split into arguments.
pub fn command_line(pid: u32) -> Option<Vec<String>> {
    sys::command_line(pid)
}

/// The parent of the current process.
pub fn parent_pid() -> u32 {
    sys::parent_pid()
}

/// The host process that ran this hook: our parent, or, when the parent is the shell wrapping
/// our command (`sh -c '… fabric-session hook …'`, `bash -lc …`, `fish -c …`, `cmd /C …`,
/// `pwsh -Command …`: see [`crate::shell_wrapper`]), that shell's parent. Returns its pid and
/// start time so a later reader can tell a reused pid from the same process.
pub fn host_process() -> Option<ProcessInfo> {
    let mut pid = parent_pid();
    for _ in 0..3 {
        let info = process_info(pid)?;
        if is_wrapping_shell(&info) {
            pid = info.parent;
            continue;
        }
        return Some(info);
    }
    None
}

/// A shell wrapping our command: its command line names our program. On Windows, where a
/// command line may not be readable (Wine reports none; a process of another user), a shell
/// by its image name alone is taken for the wrapper: a hook's direct parent that is `cmd.exe`
/// is the host's `cmd /C` (a person typing our hook into a console is not a host).
fn is_wrapping_shell(info: &ProcessInfo) -> bool {
    match command_line(info.pid) {
        Some(args) if !args.is_empty() => {
            crate::shell_wrapper::wraps_program(&info.name, &args, crate::paths::PROGRAM_NAME)
        }
        _ => cfg!(windows) && crate::shell_wrapper::is_shell(&info.name),
    }
}

/// Whether a recorded process (pid and start time) is still the same live process.
pub fn same_process_alive(pid: u32, start_ticks: u64) -> bool {
    if !pid_alive(pid) {
        return false;
    }
    if start_ticks == 0 {
        return true;
    }
    match process_info(pid) {
        Some(info) => info.start_ticks == 0 || info.start_ticks == start_ticks,
        // Alive but unreadable (another user's process on macOS, a protected one on
        // Windows): the pid check is all there is.
        None => cfg!(any(target_os = "macos", windows)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_alive_and_readable() {
        let me = std::process::id();
        assert!(pid_alive(me));
        let info = process_info(me).expect("own /proc entry");
        assert_eq!(info.parent, parent_pid());
        assert!(same_process_alive(me, info.start_ticks));
        assert!(!same_process_alive(me, info.start_ticks + 1));
    }

    #[test]
    fn an_unreaped_child_is_dead() {
        // Exits at once; `child` keeps it unreaped (Unix) or its handle open (Windows).
        let mut child = if cfg!(windows) {
            std::process::Command::new("cmd.exe")
                .args(["/d", "/c", "exit 0"])
                .spawn()
                .unwrap()
        } else {
            std::process::Command::new("true").spawn().unwrap()
        };
        let pid = child.id();
        // Wait until it has exited without reaping it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while process_info(pid).is_some_and(|info| info.state != 'Z') {
            assert!(std::time::Instant::now() < deadline, "child never exited");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(!pid_alive(pid));
        child.wait().unwrap();
    }

    #[test]
    fn impossible_pid_is_dead() {
        assert!(!pid_alive(0));
        assert!(!pid_alive(4_194_304));
    }
}
