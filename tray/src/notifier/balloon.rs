//! Windows: the tray icon's balloon (`Shell_NotifyIconW` with `NIF_INFO`), the route a
//! notification takes where toasts are unavailable: no AppUserModelID registered for the
//! app, a Windows without the toast platform, or Wine (whose toast classes are not
//! registered: `0x80040154`). Windows 10 and 11 show a balloon as a toast of the tray's own;
//! older Windows and Wine as a balloon at the icon.
//!
//! The icon is the shell's ([`anchor`], set once the icon exists). One balloon at a time: a
//! new one replaces the one shown, [`withdraw`] takes it away. A click on it
//! ([`clicked`], from the shell's window) runs the notifier's click for what it was about.

use std::sync::{Arc, Mutex};

use windows_sys::Win32::Foundation::HWND;
use windows_sys::Win32::UI::Shell::{
    NIF_INFO, NIIF_INFO, NIM_MODIFY, NOTIFYICONDATAW, Shell_NotifyIconW,
};

use super::OnClick;

/// The icon balloons are shown on: its window and id.
#[derive(Clone, Copy)]
struct Anchor {
    hwnd: isize,
    id: u32,
}

/// What a click on the balloon shown runs: the notifier's click, with its session (or none,
/// for several sessions or a notice).
struct Shown {
    key: Option<String>,
    session: Option<String>,
    on_click: Arc<OnClick>,
}

static ANCHOR: Mutex<Option<Anchor>> = Mutex::new(None);
static SHOWN: Mutex<Option<Shown>> = Mutex::new(None);

/// Why a balloon could not be shown.
#[derive(Debug, thiserror::Error)]
pub enum BalloonError {
    #[error("the tray icon is not there yet")]
    NoIcon,
    #[error("the notification area refused the balloon")]
    Refused,
}

/// The tray icon balloons are shown on: the notification-area icon of window `hwnd` (the
/// shell's, once the icon exists). Its id is not told by tray-icon: it is the first the
/// notification area knows for that window (a modification that changes nothing succeeds
/// only for an icon it has).
pub(crate) fn anchor(hwnd: isize) {
    let id = (0..64u32).find(|&id| {
        let data = icon_data(Anchor { hwnd, id });
        // SAFETY: a fully initialised NOTIFYICONDATAW of the size it states, changing nothing.
        unsafe { Shell_NotifyIconW(NIM_MODIFY, &data) != 0 }
    });
    let Some(id) = id else {
        tracing::warn!("the tray icon is not known to the notification area: no balloons");
        return;
    };
    if let Ok(mut anchor) = ANCHOR.lock() {
        *anchor = Some(Anchor { hwnd, id });
    }
}

/// Shows `title` and `text` in the icon's balloon, replacing the one shown. `key` is the
/// model's notification it stands for (`None`: a one-off); a click runs `on_click` with
/// `session`.
pub(super) fn show(
    key: Option<&str>,
    title: &str,
    text: &str,
    session: Option<String>,
    on_click: Arc<OnClick>,
) -> Result<(), BalloonError> {
    let anchor = ANCHOR
        .lock()
        .ok()
        .and_then(|a| *a)
        .ok_or(BalloonError::NoIcon)?;
    let mut data = icon_data(anchor);
    data.uFlags = NIF_INFO;
    data.dwInfoFlags = NIIF_INFO;
    copy_wide(&mut data.szInfoTitle, title);
    copy_wide(&mut data.szInfo, text);
    // SAFETY: a fully initialised NOTIFYICONDATAW of the size it states.
    if unsafe { Shell_NotifyIconW(NIM_MODIFY, &data) } == 0 {
        return Err(BalloonError::Refused);
    }
    if let Ok(mut shown) = SHOWN.lock() {
        *shown = Some(Shown {
            key: key.map(str::to_owned),
            session,
            on_click,
        });
    }
    Ok(())
}

/// Takes the balloon of `key` away, if it is the one shown.
pub(super) fn withdraw(key: &str) {
    let ours = SHOWN
        .lock()
        .ok()
        .is_some_and(|mut shown| match shown.as_ref() {
            Some(s) if s.key.as_deref() == Some(key) => {
                *shown = None;
                true
            }
            _ => false,
        });
    let anchor = ANCHOR.lock().ok().and_then(|a| *a);
    if let (true, Some(anchor)) = (ours, anchor) {
        // An empty text removes the balloon.
        let mut data = icon_data(anchor);
        data.uFlags = NIF_INFO;
        // SAFETY: as in `show`.
        unsafe { Shell_NotifyIconW(NIM_MODIFY, &data) };
    }
}

/// The balloon shown was clicked (the shell saw `NIN_BALLOONUSERCLICK`).
pub(crate) fn clicked() {
    let shown = SHOWN.lock().ok().and_then(|mut shown| shown.take());
    if let Some(shown) = shown {
        (shown.on_click)(shown.session.as_deref());
    }
}

fn icon_data(anchor: Anchor) -> NOTIFYICONDATAW {
    // SAFETY: plain old data; zeroed is a valid empty value.
    let mut data: NOTIFYICONDATAW = unsafe { std::mem::zeroed() };
    data.cbSize = std::mem::size_of::<NOTIFYICONDATAW>() as u32;
    data.hWnd = anchor.hwnd as HWND;
    data.uID = anchor.id;
    data
}

/// Copies `text` into a fixed UTF-16 field, cut to fit with its NUL.
fn copy_wide(field: &mut [u16], text: &str) {
    let limit = field.len().saturating_sub(1);
    let mut units: Vec<u16> = text.encode_utf16().take(limit).collect();
    // Never end on half a surrogate pair.
    if units.last().is_some_and(|u| (0xD800..0xDC00).contains(u)) {
        units.pop();
    }
    field[..units.len()].copy_from_slice(&units);
    field[units.len()] = 0;
}
