//! Process facts on Linux (and other Unix systems with a Linux-style `/proc`), read from
//! `/proc/<pid>/stat` and `/proc/<pid>/cmdline`. Never spawns anything.

use super::ProcessInfo;

/// Signal 0 (a permission error still means the pid exists), then the zombie check.
pub(super) fn pid_alive(pid: u32) -> bool {
    // A zombie (dead, not yet reaped by its parent) still answers signal 0.
    super::pid_exists(pid) && process_info(pid).is_none_or(|info| info.state != 'Z')
}

/// `/proc/<pid>/stat`: `pid (comm) state ppid …`, field 22 the start time in clock ticks
/// since boot. `comm` may hold spaces and parentheses, so it ends at the last `)`.
pub(super) fn process_info(pid: u32) -> Option<ProcessInfo> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
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

/// `/proc/<pid>/cmdline`: the arguments, NUL-separated.
pub(super) fn command_line(pid: u32) -> Option<Vec<String>> {
    let bytes = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(
        bytes
            .split(|b| *b == 0)
            .filter(|arg| !arg.is_empty())
            .map(|arg| String::from_utf8_lossy(arg).into_owned())
            .collect(),
    )
}

pub(super) fn parent_pid() -> u32 {
    // SAFETY: getppid has no preconditions.
    unsafe { libc::getppid() as u32 }
}
