//! `companion-desktop`: the desktop plumbing the tray and the dashboard share.
//!
//! Desktop facts (`desktop`: which desktop, a tray host on the bus, our GNOME Shell
//! extension's name), finding our programs (`programs`), the tray's one-per-person lock
//! (`tray_lock`), the login item (`autostart`), the folders whose changes the programs show
//! (`watched`) and, with the `watch` feature, the one file watcher (`file_watch`). The hook
//! binary links it without `watch`: no file watcher on a hook's path. See
//! `docs/ARCHITECTURE.md`.

pub mod autostart;
pub mod desktop;
#[cfg(feature = "watch")]
pub mod file_watch;
pub mod programs;
pub mod tray_lock;
pub mod watched;
