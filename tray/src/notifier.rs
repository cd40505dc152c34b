//! Desktop notifications through notify-rust, driven from the background thread's tokio
//! runtime (its async API, so no thread per notification).
//!
//! One notification per session at a time: a new rise replaces the session's notification on
//! screen, a fall to zero (or the session's end) closes it. Clicking one (its default action,
//! where the notification server supports actions) opens the dashboard. A failure to notify
//! (no notification daemon, no session bus) is logged once; the tray carries on.

use std::cell::Cell;
#[cfg(all(unix, not(target_os = "macos")))]
use std::collections::HashMap;
use std::rc::Rc;

use notify_rust::Notification;
#[cfg(all(unix, not(target_os = "macos")))]
use notify_rust::NotificationHandle;

use crate::model;

/// The application name notifications carry.
pub const APP_NAME: &str = "Fabric Companion";

/// Shows and withdraws notifications. Lives on the background thread.
pub struct Notifier {
    #[cfg(all(unix, not(target_os = "macos")))]
    handles: HashMap<String, Rc<NotificationHandle>>,
    failed_once: Cell<bool>,
    on_click: Rc<dyn Fn()>,
}

impl Notifier {
    /// `on_click` runs when a person clicks a notification.
    pub fn new(on_click: impl Fn() + 'static) -> Self {
        Notifier {
            #[cfg(all(unix, not(target_os = "macos")))]
            handles: HashMap::new(),
            failed_once: Cell::new(false),
            on_click: Rc::new(on_click),
        }
    }

    /// Raises (or replaces) the session's notification. Must run inside a `LocalSet`.
    #[cfg(all(unix, not(target_os = "macos")))]
    pub async fn raise(&mut self, session: &str, project: &str, unread: u64) {
        let (summary, body) = model::notification_text(project, unread);
        let mut notification = Notification::new();
        notification
            .appname(APP_NAME)
            .summary(&summary)
            .body(&body)
            .action("default", "Open Dashboard");
        if let Some(previous) = self.handles.get(session) {
            notification.id(previous.id());
        }
        match notification.show_async().await {
            Ok(handle) => {
                self.failed_once.set(false);
                let handle = Rc::new(handle);
                self.handles.insert(session.to_string(), Rc::clone(&handle));
                let on_click = Rc::clone(&self.on_click);
                tokio::task::spawn_local(async move {
                    let mut clicked = false;
                    handle
                        .wait_for_action_async(|response| {
                            clicked = matches!(
                                response,
                                notify_rust::NotificationResponse::Default
                            ) || matches!(
                                response,
                                notify_rust::NotificationResponse::Action(a) if a == "default"
                            );
                        })
                        .await;
                    if clicked {
                        on_click();
                    }
                });
            }
            Err(error) => {
                if !self.failed_once.replace(true) {
                    tracing::warn!(%error, "cannot show a desktop notification; carrying on without");
                }
            }
        }
    }

    /// The dashboard's "Send a test notification": a one-off, so a person can check that
    /// notifications reach them.
    pub async fn test(&mut self) {
        let mut notification = Notification::new();
        notification
            .appname(APP_NAME)
            .summary("Fabric Companion")
            .body("Test notification: unread mail on the project board will look like this.");
        #[cfg(all(unix, not(target_os = "macos")))]
        let shown = notification.show_async().await.map(drop);
        #[cfg(not(all(unix, not(target_os = "macos"))))]
        let shown = notification.show().map(drop);
        match shown {
            Ok(()) => self.failed_once.set(false),
            Err(error) => {
                if !self.failed_once.replace(true) {
                    tracing::warn!(%error, "cannot show a desktop notification; carrying on without");
                }
            }
        }
    }

    /// Closes the session's notification, if one is shown.
    #[cfg(all(unix, not(target_os = "macos")))]
    pub async fn withdraw(&mut self, session: &str) {
        if let Some(handle) = self.handles.remove(session) {
            handle.close_async().await;
        }
    }

    /// Raises the session's notification (macOS and Windows: no replacing, no click action).
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    pub async fn raise(&mut self, _session: &str, project: &str, unread: u64) {
        let (summary, body) = model::notification_text(project, unread);
        let shown = Notification::new()
            .appname(APP_NAME)
            .summary(&summary)
            .body(&body)
            .show()
            .map(|_| ());
        self.shown(shown);
    }

    /// macOS and Windows: notify-rust cannot close a notification there; nothing to do.
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    pub async fn withdraw(&mut self, _session: &str) {
        let _ = &self.on_click;
    }

    #[cfg(not(all(unix, not(target_os = "macos"))))]
    fn shown(&self, result: notify_rust::error::Result<()>) {
        match result {
            Ok(()) => self.failed_once.set(false),
            Err(error) => {
                if !self.failed_once.replace(true) {
                    tracing::warn!(%error, "cannot show a desktop notification; carrying on without");
                }
            }
        }
    }
}
