//! The notification area on Windows, where tray-icon leaves two gaps: it shows its menu only
//! when `Shell_NotifyIconGetRect` answers (a stub in Wine 8.0, so there no click ever showed
//! it), and it gives no way to the icon's balloon. Here the icon's window (tray-icon's
//! `window_handle`) is subclassed: a click (either button, released) shows our muda menu at the
//! cursor through muda's own Windows context-menu call, which hands the chosen item to the
//! same `MenuEvent` handler tray-icon's menu would; a click on a balloon goes to
//! [`crate::notifier::balloon`]. tray-icon is given no menu on Windows, so one menu shows,
//! wherever the shell answers or not. The icon's window and id are what balloons are shown on.
//!
//! One fact of tray-icon 0.24 this relies on (checked by the Wine suite's tray test): its
//! icon's callback message is `WM_USER_TRAYICON` (6002), with the mouse message in `lParam`.

use std::cell::RefCell;

use tray_icon::TrayIcon;
use tray_icon::menu::{ContextMenu, Menu};
use windows_sys::Win32::Foundation::{HWND, LPARAM, LRESULT, WPARAM};
use windows_sys::Win32::UI::Shell::{DefSubclassProc, SetWindowSubclass};
use windows_sys::Win32::UI::WindowsAndMessaging::{WM_LBUTTONUP, WM_RBUTTONUP, WM_USER};

/// tray-icon's callback message for its icon (`WM_USER_TRAYICON` in its Windows backend).
const TRAY_ICON_MESSAGE: u32 = 6002;
/// `NIN_BALLOONUSERCLICK`: the balloon was clicked.
const BALLOON_CLICKED: u32 = WM_USER + 5;
/// Our subclass's id on that window.
const SUBCLASS_ID: usize = 0x4661_6272; // "Fabr"

// The menu a click shows (made and replaced on the event loop's thread, as the window's
// messages are handled there). The initializer is `const` already: clippy 1.96 with a locally
// built standard library (-Zbuild-std) does not see it.
thread_local! {
    #[allow(clippy::missing_const_for_thread_local)]
    static MENU: RefCell<Option<Menu>> = const { RefCell::new(None) };
}

/// Takes over the icon's clicks, and makes the icon the one balloons are shown on.
pub(super) fn attach(tray: &TrayIcon) {
    let hwnd = tray.window_handle();
    // SAFETY: the window is tray-icon's, alive as long as `tray`, on this thread; the
    // subclass is removed with the window.
    let attached = unsafe { SetWindowSubclass(hwnd, Some(subclass), SUBCLASS_ID, 0) } != 0;
    if !attached {
        tracing::warn!("cannot take the tray icon's clicks: its menu may not open");
    }
    crate::notifier::balloon::anchor(hwnd as isize);
}

/// The menu a click shows from now on.
pub(super) fn set_menu(menu: Menu) {
    MENU.with(|current| *current.borrow_mut() = Some(menu));
}

unsafe extern "system" fn subclass(
    hwnd: HWND,
    message: u32,
    wparam: WPARAM,
    lparam: LPARAM,
    _id: usize,
    _data: usize,
) -> LRESULT {
    if message == TRAY_ICON_MESSAGE {
        match lparam as u32 {
            WM_LBUTTONUP | WM_RBUTTONUP => show_menu(hwnd),
            BALLOON_CLICKED => crate::notifier::balloon::clicked(),
            _ => {}
        }
    }
    // SAFETY: passing the message on to tray-icon's own handling, as a subclass must.
    unsafe { DefSubclassProc(hwnd, message, wparam, lparam) }
}

/// Shows the menu at the cursor (modal: returns once an item was chosen or it was dismissed;
/// muda sends the chosen item's `MenuEvent`).
fn show_menu(hwnd: HWND) {
    // Taken out while it shows: a message handled during the modal loop cannot reach it twice.
    let Some(menu) = MENU.with(|current| current.borrow_mut().take()) else {
        return;
    };
    // SAFETY: `hwnd` is the live window whose message we are handling, on its thread.
    unsafe {
        menu.show_context_menu_for_hwnd(hwnd as isize, None);
    }
    MENU.with(|current| {
        let mut current = current.borrow_mut();
        if current.is_none() {
            *current = Some(menu);
        }
    });
}
