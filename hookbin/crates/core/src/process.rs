//! Facts about processes: whether a pid is alive, a process's parent, name, command line and
//! start time, and the host process that ran this hook.
//!
//! On Linux everything is read from `/proc` (no `ps`, no allocation-heavy crates). Elsewhere
//! the ancestor facts fall back to `ps` with a short deadline.

/// Whether a process with this pid exists (signal 0; a permission error still means alive).
pub fn pid_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        if pid <= 0 {
            return false;
        }
        // SAFETY: kill with signal 0 sends nothing; it only checks that the pid exists.
        let rc = unsafe { libc::kill(pid, 0) };
        let exists = rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        // A zombie (dead, not yet reaped by its parent) still answers signal 0.
        exists && !is_zombie(pid as u32)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

/// Whether the process has exited but not been reaped (state `Z`; Linux only).
#[cfg(unix)]
fn is_zombie(pid: u32) -> bool {
    process_info(pid).is_some_and(|info| info.state == 'Z')
}

/// What we know of one process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessInfo {
    pub pid: u32,
    pub parent: u32,
    /// The kernel's short name (`comm`).
    pub name: String,
    /// The kernel's one-letter state (`R`, `S`, `Z`, …); `?` where unknown.
    pub state: char,
    /// Clock ticks since boot at which the process started (Linux); 0 where unknown.
    pub start_ticks: u64,
}

/// Reads a process's parent, name and start time.
#[cfg(target_os = "linux")]
pub fn process_info(pid: u32) -> Option<ProcessInfo> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Format: pid (comm) state ppid ... ; comm may hold spaces and parentheses.
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = stat.get(close + 2..)?.split(' ').collect();
    let state = rest.first()?.chars().next()?;
    let parent = rest.get(1)?.parse().ok()?;
    let start_ticks = rest.get(19)?.parse().ok()?;
    Some(ProcessInfo {
        pid,
        parent,
        name,
        state,
        start_ticks,
    })
}

/// Reads a process's parent and name through `ps` (non-Linux Unix).
#[cfg(all(unix, not(target_os = "linux")))]
pub fn process_info(pid: u32) -> Option<ProcessInfo> {
    let out = ps_field(pid, "ppid=,comm=")?;
    let mut parts = out.trim().splitn(2, char::is_whitespace);
    let parent = parts.next()?.trim().parse().ok()?;
    let name = parts.next().unwrap_or("").trim();
    let name = name.rsplit('/').next().unwrap_or(name).to_string();
    Some(ProcessInfo {
        pid,
        parent,
        name,
        state: '?',
        start_ticks: 0,
    })
}

/// No ancestor facts on other platforms.
#[cfg(not(unix))]
pub fn process_info(_pid: u32) -> Option<ProcessInfo> {
    None
}

/// A process's command line, arguments split (Linux: `/proc/<pid>/cmdline`).
#[cfg(target_os = "linux")]
pub fn command_line(pid: u32) -> Option<Vec<String>> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        bytes
            .split(|b| *b == 0)
            .filter(|arg| !arg.is_empty())
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect(),
    )
}

/// A process's command line through `ps` (split on whitespace: good enough for matching).
#[cfg(all(unix, not(target_os = "linux")))]
pub fn command_line(pid: u32) -> Option<Vec<String>> {
    let out = ps_field(pid, "command=")?;
    Some(out.split_whitespace().map(str::to_string).collect())
}

/// No command lines on other platforms.
#[cfg(not(unix))]
pub fn command_line(_pid: u32) -> Option<Vec<String>> {
    None
}

#[cfg(all(unix, not(target_os = "linux")))]
fn ps_field(pid: u32, field: &str) -> Option<String> {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let mut child = Command::new("ps")
        .args(["-o", field, "-p", &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_millis(500);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut()?, &mut out).ok()?;
    Some(out)
}

/// The parent of the current process.
pub fn parent_pid() -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: getppid has no preconditions.
        unsafe { libc::getppid() as u32 }
    }
    #[cfg(not(unix))]
    {
        0
    }
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

fn is_wrapping_shell(info: &ProcessInfo) -> bool {
    command_line(info.pid).is_some_and(|args| {
        crate::shell_wrapper::wraps_program(&info.name, &args, crate::install::PROGRAM_NAME)
    })
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
        None => cfg!(not(target_os = "linux")),
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
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Wait until it has exited without reaping it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !is_zombie(pid) {
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
