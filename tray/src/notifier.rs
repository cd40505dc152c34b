//! Desktop notifications, driven from the background thread's tokio runtime: on Linux and
//! the BSDs through notify-rust's D-Bus client (its async API, so no thread per
//! notification); on Windows through notify-rust's toasts, under the installed app's
//! AppUserModelID (the one its Start menu shortcut carries, without which Windows drops
//! them); on macOS through the User Notifications framework ([`macos`]).
//!
//! One notification per session at a time: a new rise replaces the session's notification on
//! screen, a fall to zero (or the session's end) closes it. Clicking one (its default action,
//! where the notification server supports actions) opens the dashboard. A failure to notify
//! (no notification daemon, no session bus) is logged once; the tray carries on.

use std::cell::Cell;
#[cfg(all(unix, not(target_os = "macos")))]
use std::collections::HashMap;
#[cfg(all(unix, not(target_os = "macos")))]
use std::rc::Rc;
use std::sync::Arc;

#[cfg(not(target_os = "macos"))]
use notify_rust::Notification;
#[cfg(all(unix, not(target_os = "macos")))]
use notify_rust::NotificationHandle;

use crate::model;

#[cfg(target_os = "macos")]
mod macos;

/// The application name notifications carry.
pub const APP_NAME: &str = "Fabric Companion";

/// Shows and withdraws notifications. Lives on the background thread.
pub struct Notifier {
    #[cfg(all(unix, not(target_os = "macos")))]
    handles: HashMap<String, Rc<NotificationHandle>>,
    #[cfg(target_os = "macos")]
    center: Result<macos::MacNotifier, macos::MacError>,
    failed_once: Cell<bool>,
    on_click: Arc<dyn Fn() + Send + Sync>,
}

impl Notifier {
    /// `on_click` runs when a person clicks a notification.
    pub fn new(on_click: impl Fn() + Send + Sync + 'static) -> Self {
        let on_click: Arc<dyn Fn() + Send + Sync> = Arc::new(on_click);
        Notifier {
            #[cfg(all(unix, not(target_os = "macos")))]
            handles: HashMap::new(),
            #[cfg(target_os = "macos")]
            center: macos::MacNotifier::new(Arc::clone(&on_click)),
            failed_once: Cell::new(false),
            on_click,
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
                let on_click = Arc::clone(&self.on_click);
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
        const SUMMARY: &str = "Fabric Companion";
        const BODY: &str =
            "Test notification: unread mail on the project board will look like this.";
        #[cfg(target_os = "macos")]
        {
            let shown = self
                .mac()
                .map(|center| center.show("test-notification", SUMMARY, BODY));
            self.shown(shown);
        }
        #[cfg(not(target_os = "macos"))]
        {
            let mut notification = Notification::new();
            notification.appname(APP_NAME).summary(SUMMARY).body(BODY);
            #[cfg(windows)]
            notification.app_id(companion_core::paths::APP_IDENTIFIER);
            #[cfg(all(unix, not(target_os = "macos")))]
            let shown = notification.show_async().await.map(drop);
            #[cfg(windows)]
            let shown = notification.show().map(drop);
            self.shown(shown);
        }
    }

    /// The first-run offer to set up hooks: a one-off, pointing at the tray's menu.
    pub async fn offer(&mut self, summary: &str, body: &str) {
        let mut notification = Notification::new();
        notification.appname(APP_NAME).summary(summary).body(body);
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

    /// Windows: raises the session's notification as a toast (no replacing, no click action:
    /// notify-rust's toasts have neither).
    #[cfg(windows)]
    pub async fn raise(&mut self, _session: &str, project: &str, unread: u64) {
        let (summary, body) = model::notification_text(project, unread);
        let shown = Notification::new()
            .appname(APP_NAME)
            .app_id(companion_core::paths::APP_IDENTIFIER)
            .summary(&summary)
            .body(&body)
            .show()
            .map(drop);
        self.shown(shown);
    }

    /// Windows: a toast cannot be withdrawn through notify-rust; nothing to do.
    #[cfg(windows)]
    pub async fn withdraw(&mut self, _session: &str) {
        let _ = &self.on_click;
    }

    /// macOS: raises or replaces the session's notification; a click opens the dashboard.
    #[cfg(target_os = "macos")]
    pub async fn raise(&mut self, session: &str, project: &str, unread: u64) {
        let (summary, body) = model::notification_text(project, unread);
        let shown = self
            .mac()
            .map(|center| center.show(session, &summary, &body));
        self.shown(shown);
    }

    /// macOS: removes the session's notification from the screen and Notification Centre.
    #[cfg(target_os = "macos")]
    pub async fn withdraw(&mut self, session: &str) {
        if let Ok(center) = &self.center {
            center.withdraw(session);
        }
        let _ = &self.on_click;
    }

    #[cfg(target_os = "macos")]
    fn mac(&self) -> Result<&macos::MacNotifier, String> {
        self.center.as_ref().map_err(ToString::to_string)
    }

    /// Notes a failure once (until the next success); the tray carries on either way.
    fn shown<E: std::fmt::Display>(&self, result: Result<(), E>) {
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
