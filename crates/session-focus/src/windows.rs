//! Windows, natively (user32 and the ToolHelp snapshot; no subprocess): the process table
//! (parents and executable names, for the ancestor walk), the visible unowned top-level
//! windows and their processes (`EnumWindows`, `GetWindowThreadProcessId`), and raising one
//! (`ShowWindow(SW_RESTORE)` when minimised, `AllowSetForegroundWindow`, `SetForegroundWindow`,
//! read back with `GetForegroundWindow`). A classic console's window belongs to its
//! `conhost.exe`/`OpenConsole.exe`, a child of the shell, so those children's windows count
//! for the shell. Written and compiled for Windows; not run here.

use std::collections::HashMap;

use windows_sys::Win32::Foundation::{CloseHandle, HWND, INVALID_HANDLE_VALUE, LPARAM};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, PROCESSENTRY32W, Process32FirstW, Process32NextW, TH32CS_SNAPPROCESS,
};
use windows_sys::Win32::UI::WindowsAndMessaging::{
    ASFW_ANY, AllowSetForegroundWindow, EnumWindows, GW_OWNER, GetForegroundWindow, GetWindow,
    GetWindowThreadProcessId, IsIconic, IsWindowVisible, SW_RESTORE, SetForegroundWindow,
    ShowWindow,
};
use windows_sys::core::BOOL;

use crate::Refusal;
use crate::ancestry::Ancestor;

/// One process of the table: its parent and executable name.
#[derive(Debug, Clone)]
pub struct Entry {
    pub parent: u32,
    pub name: String,
}

/// Every process's parent and executable name (one ToolHelp snapshot).
pub fn process_table() -> HashMap<u32, Entry> {
    let mut table = HashMap::new();
    // SAFETY: the snapshot handle is checked and closed; the entry's size is set as required.
    unsafe {
        let snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
        if snapshot == INVALID_HANDLE_VALUE || snapshot.is_null() {
            return table;
        }
        let mut entry = PROCESSENTRY32W {
            dwSize: std::mem::size_of::<PROCESSENTRY32W>() as u32,
            ..Default::default()
        };
        let mut more = Process32FirstW(snapshot, &mut entry) != 0;
        while more {
            let len = entry
                .szExeFile
                .iter()
                .position(|c| *c == 0)
                .unwrap_or(entry.szExeFile.len());
            table.insert(
                entry.th32ProcessID,
                Entry {
                    parent: entry.th32ParentProcessID,
                    name: String::from_utf16_lossy(&entry.szExeFile[..len]),
                },
            );
            more = Process32NextW(snapshot, &mut entry) != 0;
        }
        CloseHandle(snapshot);
    }
    table
}

/// `pid` and its ancestors from one snapshot of the process table, nearest first. A parent
/// pid Windows reused for a younger process is not told apart here (no start times): the
/// walk stops at a loop and after `MAX_DEPTH` steps.
pub fn ancestors(pid: u32) -> Vec<Ancestor> {
    let table = process_table();
    let mut chain: Vec<Ancestor> = Vec::new();
    let mut next = pid;
    while next != 0
        && chain.len() < crate::ancestry::MAX_DEPTH
        && !chain.iter().any(|a| a.pid == next)
    {
        let Some(entry) = table.get(&next) else {
            break;
        };
        chain.push(Ancestor {
            pid: next,
            name: entry.name.clone(),
        });
        next = entry.parent;
    }
    chain
}

/// Visible, unowned top-level windows with their processes, top of the z-order first.
fn top_level_windows() -> Vec<(HWND, u32)> {
    unsafe extern "system" fn collect(hwnd: HWND, out: LPARAM) -> BOOL {
        // SAFETY: `out` is the vector passed to EnumWindows below, alive for its duration.
        unsafe {
            let windows = &mut *(out as *mut Vec<(HWND, u32)>);
            if IsWindowVisible(hwnd) != 0 && GetWindow(hwnd, GW_OWNER).is_null() {
                let mut pid = 0u32;
                GetWindowThreadProcessId(hwnd, &mut pid);
                windows.push((hwnd, pid));
            }
        }
        1
    }
    let mut windows: Vec<(HWND, u32)> = Vec::new();
    // SAFETY: the callback only touches the vector, which outlives the call.
    unsafe {
        EnumWindows(
            Some(collect),
            &mut windows as *mut Vec<(HWND, u32)> as LPARAM,
        );
    }
    windows
}

fn is_console_host(name: &str) -> bool {
    name.eq_ignore_ascii_case("conhost.exe") || name.eq_ignore_ascii_case("OpenConsole.exe")
}

/// Raises the window of the first process in `chain` owning one (or whose console host
/// does); the program, its pid and the window.
pub fn raise_first(chain: &[Ancestor]) -> Result<(String, u32, u64), Refusal> {
    let windows = top_level_windows();
    let table = process_table();
    let found = chain.iter().find_map(|ancestor| {
        let own = windows.iter().find(|(_, pid)| *pid == ancestor.pid);
        let console = || {
            windows.iter().find(|(_, pid)| {
                table
                    .get(pid)
                    .is_some_and(|e| e.parent == ancestor.pid && is_console_host(&e.name))
            })
        };
        own.or_else(console).map(|(hwnd, _)| (*hwnd, ancestor))
    });
    let (hwnd, owner) = found.ok_or(Refusal::NoWindow)?;
    // SAFETY: hwnd came from EnumWindows; these calls accept any window handle.
    let raised = unsafe {
        if IsIconic(hwnd) != 0 {
            ShowWindow(hwnd, SW_RESTORE);
        }
        AllowSetForegroundWindow(ASFW_ANY);
        SetForegroundWindow(hwnd) != 0 && GetForegroundWindow() == hwnd
    };
    if raised {
        Ok((owner.name.clone(), owner.pid, hwnd as usize as u64))
    } else {
        // Windows gives the foreground only to a process that has it or was just given input
        // (a tray click is; a command typed in a terminal that is not in front is not).
        Err(Refusal::Refused)
    }
}

/// The pid owning the foreground window.
pub fn active_pid() -> Option<u32> {
    // SAFETY: GetForegroundWindow has no preconditions; a null window is checked.
    unsafe {
        let hwnd = GetForegroundWindow();
        if hwnd.is_null() {
            return None;
        }
        let mut pid = 0u32;
        GetWindowThreadProcessId(hwnd, &mut pid);
        (pid != 0).then_some(pid)
    }
}
