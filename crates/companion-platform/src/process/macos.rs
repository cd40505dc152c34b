//! Process facts on macOS through libproc and sysctl, the calls `ps` itself makes:
//! `proc_pidinfo(PROC_PIDTBSDINFO)` for the parent, state and start time, `proc_pidpath` for
//! the executable's name, `sysctl(KERN_PROCARGS2)` for the arguments. Never spawns anything.
//!
//! Only compiled for macOS (checked by the foreign-target lint, never run here); the buffer
//! parsing is in [`super::parse`], tested on every OS.

use std::ffi::c_void;

use super::ProcessInfo;

/// `pbi_status` of a process that has exited and not been reaped (`SZOMB`, `<sys/proc.h>`).
const STATUS_ZOMBIE: u32 = libc::SZOMB;

fn bsd_info(pid: u32) -> Option<libc::proc_bsdinfo> {
    let raw = libc::c_int::try_from(pid).ok().filter(|p| *p > 0)?;
    let size = libc::c_int::try_from(std::mem::size_of::<libc::proc_bsdinfo>()).ok()?;
    // SAFETY: proc_bsdinfo is plain old data; zeroed is a valid value.
    let mut info: libc::proc_bsdinfo = unsafe { std::mem::zeroed() };
    // SAFETY: the buffer is a proc_bsdinfo of exactly `size` bytes, as PROC_PIDTBSDINFO expects.
    let written = unsafe {
        libc::proc_pidinfo(
            raw,
            libc::PROC_PIDTBSDINFO,
            0,
            (&raw mut info).cast::<c_void>(),
            size,
        )
    };
    (written == size).then_some(info)
}

/// Signal 0 (a permission error still means the pid exists), then the zombie check:
/// `PROC_PIDTBSDINFO` also answers for zombies, with `pbi_status == SZOMB`.
pub(super) fn pid_alive(pid: u32) -> bool {
    super::pid_exists(pid) && bsd_info(pid).is_none_or(|info| info.pbi_status != STATUS_ZOMBIE)
}

/// One-letter state like Linux's for `pbi_status` (`SIDL`, `SRUN`, `SSLEEP`, `SSTOP`, `SZOMB`).
fn state_letter(status: u32) -> char {
    match status {
        1 => 'I',
        2 => 'R',
        3 => 'S',
        4 => 'T',
        STATUS_ZOMBIE => 'Z',
        _ => '?',
    }
}

/// The executable's file name (`proc_pidpath`), else the kernel's short name.
fn name_of(pid: u32, info: &libc::proc_bsdinfo) -> String {
    let mut buffer = vec![0u8; libc::PROC_PIDPATHINFO_MAXSIZE as usize];
    // SAFETY: the buffer holds PROC_PIDPATHINFO_MAXSIZE bytes, the size passed.
    let len = unsafe {
        libc::proc_pidpath(
            pid as libc::c_int,
            buffer.as_mut_ptr().cast::<c_void>(),
            buffer.len() as u32,
        )
    };
    if let Ok(len) = usize::try_from(len)
        && len > 0
    {
        let path = String::from_utf8_lossy(&buffer[..len.min(buffer.len())]).into_owned();
        if let Some(name) = path.rsplit('/').next().filter(|n| !n.is_empty()) {
            return name.to_string();
        }
    }
    let short = if info.pbi_name[0] != 0 {
        &info.pbi_name[..]
    } else {
        &info.pbi_comm[..]
    };
    let bytes: Vec<u8> = short
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Parent, executable name, state, and start time in microseconds since the Unix epoch.
pub(super) fn process_info(pid: u32) -> Option<ProcessInfo> {
    let info = bsd_info(pid)?;
    Some(ProcessInfo {
        pid,
        parent: info.pbi_ppid,
        name: name_of(pid, &info),
        state: state_letter(info.pbi_status),
        start_ticks: info
            .pbi_start_tvsec
            .saturating_mul(1_000_000)
            .saturating_add(info.pbi_start_tvusec),
    })
}

/// `sysctl(KERN_ARGMAX)`: the largest argument area a process can have.
fn arg_max() -> Option<usize> {
    let mut mib = [libc::CTL_KERN, libc::KERN_ARGMAX];
    let mut value: libc::c_int = 0;
    let mut size = std::mem::size_of::<libc::c_int>();
    // SAFETY: mib names an int-valued sysctl; value and size describe its buffer.
    let rc = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            2,
            (&raw mut value).cast::<c_void>(),
            &mut size,
            std::ptr::null_mut(),
            0,
        )
    };
    (rc == 0).then(|| usize::try_from(value).ok()).flatten()
}

/// `sysctl(KERN_PROCARGS2, pid)`: the process's arguments (the environment is never read).
pub(super) fn command_line(pid: u32) -> Option<Vec<String>> {
    let raw = libc::c_int::try_from(pid).ok().filter(|p| *p > 0)?;
    let mut buffer = vec![0u8; arg_max()?];
    let mut size = buffer.len();
    let mut mib = [libc::CTL_KERN, libc::KERN_PROCARGS2, raw];
    // SAFETY: the buffer holds `size` bytes; the kernel writes at most that and updates size.
    let rc = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            3,
            buffer.as_mut_ptr().cast::<c_void>(),
            &mut size,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return None;
    }
    buffer.truncate(size);
    super::parse::parse_procargs2(&buffer)
}

pub(super) fn parent_pid() -> u32 {
    // SAFETY: getppid has no preconditions.
    unsafe { libc::getppid() as u32 }
}
