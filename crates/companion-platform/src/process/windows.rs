//! Process facts on Windows through the Win32 and NT APIs (`windows-sys`): `OpenProcess` with
//! the least access that answers (`PROCESS_QUERY_LIMITED_INFORMATION`, plus `SYNCHRONIZE`
//! for liveness), `WaitForSingleObject`/`GetExitCodeProcess` for whether it still runs,
//! `GetProcessTimes` for its start, `QueryFullProcessImageNameW` for its executable, and
//! `NtQueryInformationProcess` for its parent (`ProcessBasicInformation`) and command line
//! (`ProcessCommandLineInformation`, Windows 8.1 and later). Never spawns anything.
//!
//! Only compiled for Windows (checked by the foreign-target lint, never run here); the
//! command-line splitting is in [`super::parse`], tested on every OS.

use std::ffi::c_void;

use windows_sys::Wdk::System::Threading::{
    NtQueryInformationProcess, ProcessBasicInformation, ProcessCommandLineInformation,
};
use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_ACCESS_DENIED, FILETIME, GetLastError, HANDLE, STATUS_INFO_LENGTH_MISMATCH,
    STILL_ACTIVE, UNICODE_STRING, WAIT_TIMEOUT,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetExitCodeProcess, GetProcessTimes, OpenProcess, PROCESS_BASIC_INFORMATION,
    PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_SYNCHRONIZE,
    QueryFullProcessImageNameW, WaitForSingleObject,
};

use super::ProcessInfo;

/// An open process handle, closed on drop.
struct Process(HANDLE);

impl Process {
    fn open(pid: u32, access: u32) -> Result<Process, u32> {
        if pid == 0 {
            // The System Idle Process: never a process of ours.
            return Err(0);
        }
        // SAFETY: OpenProcess has no pointer arguments; a null handle means failure.
        let handle = unsafe { OpenProcess(access, 0, pid) };
        if handle.is_null() {
            // SAFETY: GetLastError has no preconditions.
            Err(unsafe { GetLastError() })
        } else {
            Ok(Process(handle))
        }
    }

    /// Whether the process has not exited: its exit code is still `STILL_ACTIVE`.
    fn running_by_exit_code(&self) -> bool {
        let mut code: u32 = 0;
        // SAFETY: the handle is open with query access; `code` is a valid out pointer.
        let ok = unsafe { GetExitCodeProcess(self.0, &mut code) } != 0;
        ok && code == STILL_ACTIVE as u32
    }

    /// Creation time, in 100-nanosecond intervals since 1601 (a `FILETIME` as one number).
    fn created(&self) -> Option<u64> {
        let zero = FILETIME {
            dwLowDateTime: 0,
            dwHighDateTime: 0,
        };
        let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
        // SAFETY: the handle is open with query access; all four are valid out pointers.
        let ok =
            unsafe { GetProcessTimes(self.0, &mut created, &mut exited, &mut kernel, &mut user) }
                != 0;
        ok.then(|| (u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime))
    }

    /// The parent's pid as the kernel recorded it at creation (it may have exited since,
    /// and its pid been reused: callers compare creation times).
    fn parent(&self) -> Option<u32> {
        // SAFETY: PROCESS_BASIC_INFORMATION is plain old data; zeroed is a valid value.
        let mut info: PROCESS_BASIC_INFORMATION = unsafe { std::mem::zeroed() };
        let mut returned: u32 = 0;
        // SAFETY: the buffer is a PROCESS_BASIC_INFORMATION of the size passed.
        let status = unsafe {
            NtQueryInformationProcess(
                self.0,
                ProcessBasicInformation,
                (&raw mut info).cast::<c_void>(),
                std::mem::size_of::<PROCESS_BASIC_INFORMATION>() as u32,
                &mut returned,
            )
        };
        (status >= 0)
            .then(|| u32::try_from(info.InheritedFromUniqueProcessId).ok())
            .flatten()
    }

    /// The executable's file name without `.exe`, lowercased (Windows names are
    /// case-insensitive): `bash`, `cmd`, `pwsh`, `claude`.
    fn name(&self) -> Option<String> {
        let mut buffer = vec![0u16; 32_768];
        let mut len = buffer.len() as u32;
        // SAFETY: the buffer holds `len` UTF-16 units; the call writes at most that.
        let ok = unsafe {
            QueryFullProcessImageNameW(self.0, PROCESS_NAME_WIN32, buffer.as_mut_ptr(), &mut len)
        } != 0;
        if !ok {
            return None;
        }
        let path = String::from_utf16_lossy(&buffer[..(len as usize).min(buffer.len())]);
        Some(super::parse::windows_executable_name(&path))
    }

    fn command_line(&self) -> Option<String> {
        // The answer is a UNICODE_STRING followed by its characters; u64 keeps it aligned.
        let mut buffer: Vec<u64> = vec![0; 512];
        loop {
            let bytes = (buffer.len() * 8) as u32;
            let mut needed: u32 = 0;
            // SAFETY: the buffer holds `bytes` bytes, the length passed.
            let status = unsafe {
                NtQueryInformationProcess(
                    self.0,
                    ProcessCommandLineInformation,
                    buffer.as_mut_ptr().cast::<c_void>(),
                    bytes,
                    &mut needed,
                )
            };
            if status == STATUS_INFO_LENGTH_MISMATCH && needed > bytes && needed < (1 << 20) {
                buffer = vec![0; (needed as usize).div_ceil(8)];
                continue;
            }
            if status < 0 {
                return None;
            }
            // SAFETY: on success the buffer starts with a UNICODE_STRING whose Buffer points
            // at `Length` bytes inside this same allocation.
            let text = unsafe {
                let header = &*(buffer.as_ptr().cast::<UNICODE_STRING>());
                if header.Buffer.is_null() {
                    return Some(String::new());
                }
                let units =
                    std::slice::from_raw_parts(header.Buffer, usize::from(header.Length) / 2);
                String::from_utf16_lossy(units)
            };
            return Some(text);
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // SAFETY: the handle was returned open by OpenProcess and is closed once.
        unsafe { CloseHandle(self.0) };
    }
}

/// Whether the process runs: opened with `SYNCHRONIZE`, it has not signalled; where only
/// query access is granted, its exit code is still `STILL_ACTIVE`; where even that is
/// refused (a protected process), it exists.
pub(super) fn pid_alive(pid: u32) -> bool {
    match Process::open(pid, PROCESS_QUERY_LIMITED_INFORMATION | PROCESS_SYNCHRONIZE) {
        Ok(process) => {
            // SAFETY: the handle is open with SYNCHRONIZE; a zero timeout only polls.
            let event = unsafe { WaitForSingleObject(process.0, 0) };
            event == WAIT_TIMEOUT
        }
        Err(ERROR_ACCESS_DENIED) => match Process::open(pid, PROCESS_QUERY_LIMITED_INFORMATION) {
            Ok(process) => process.running_by_exit_code(),
            Err(ERROR_ACCESS_DENIED) => true,
            Err(_) => false,
        },
        Err(_) => false,
    }
}

/// Parent, executable name, state (`R` running, `Z` exited but still held open by a handle)
/// and creation time. The parent is 0 when its pid now belongs to a process created later
/// (the real parent exited and Windows reused the number).
pub(super) fn process_info(pid: u32) -> Option<ProcessInfo> {
    let process = Process::open(pid, PROCESS_QUERY_LIMITED_INFORMATION).ok()?;
    let created = process.created()?;
    let mut parent = process.parent().unwrap_or(0);
    if parent != 0 {
        let parent_created = Process::open(parent, PROCESS_QUERY_LIMITED_INFORMATION)
            .ok()
            .and_then(|p| p.created());
        if parent_created.is_some_and(|t| t > created) {
            parent = 0;
        }
    }
    Some(ProcessInfo {
        pid,
        parent,
        name: process.name().unwrap_or_default(),
        state: if process.running_by_exit_code() {
            'R'
        } else {
            'Z'
        },
        start_ticks: created,
    })
}

/// The process's command line, split by the C runtime's rules.
pub(super) fn command_line(pid: u32) -> Option<Vec<String>> {
    let process = Process::open(pid, PROCESS_QUERY_LIMITED_INFORMATION).ok()?;
    let line = process.command_line()?;
    Some(super::parse::split_windows_command_line(&line))
}

/// Our own parent's pid, from our own process's basic information.
pub(super) fn parent_pid() -> u32 {
    // GetCurrentProcess returns a pseudo-handle that must not be closed: no `Process` here.
    // SAFETY: PROCESS_BASIC_INFORMATION is plain old data; zeroed is a valid value.
    let mut info: PROCESS_BASIC_INFORMATION = unsafe { std::mem::zeroed() };
    let mut returned: u32 = 0;
    // SAFETY: the pseudo-handle is always valid; the buffer has the size passed.
    let status = unsafe {
        NtQueryInformationProcess(
            GetCurrentProcess(),
            ProcessBasicInformation,
            (&raw mut info).cast::<c_void>(),
            std::mem::size_of::<PROCESS_BASIC_INFORMATION>() as u32,
            &mut returned,
        )
    };
    if status >= 0 {
        u32::try_from(info.InheritedFromUniqueProcessId).unwrap_or(0)
    } else {
        0
    }
}
