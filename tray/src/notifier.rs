//! Desktop notifications, driven from the background thread's tokio runtime by a task of
//! their own ([`Notifier::spawn`]: requests queue there, so a notification server that is
//! slow or silent never holds up the icon, the menu or Quit): on Linux and the BSDs through
//! `org.freedesktop.Notifications` on the tray's session-bus connection ([`freedesktop`],
//! set up again on each new connection); on Windows through notify-rust's toasts, under the
//! installed app's AppUserModelID (the one its Start menu shortcut carries and its installer
//! registers, without which Windows drops them), and where toasts cannot be shown (Wine,
//! `0x80040154`) through the tray icon's balloon ([`balloon`]), which Windows 10 and 11 show
//! as a toast; on macOS through the User Notifications framework ([`macos`]).
//!
//! One notification per key at a time (the model's: a session, or several sessions whose
//! rises came together): a new raise of a key replaces its notification on screen, a
//! withdraw closes it. Clicking one (its default action, where the notification server
//! supports actions) jumps to its session on Linux and the BSDs, or opens the dashboard for
//! several (macOS: the dashboard). A failure to notify (no notification daemon, no session
//! bus) is logged once; the tray carries on. Every text goes out through
//! [`crate::safe_text`].

use std::cell::Cell;
use std::sync::Arc;

#[cfg(windows)]
use notify_rust::Notification;

use tokio::sync::mpsc;

use crate::model::{self, NotificationAction};
use crate::safe_text;

#[cfg(windows)]
pub(crate) mod balloon;
#[cfg(all(unix, not(target_os = "macos")))]
mod freedesktop;
#[cfg(target_os = "macos")]
mod macos;

/// The application name notifications carry.
pub const APP_NAME: &str = "Fabric Companion";

/// What runs when a notification is clicked: its session's id, or `None` for several (or
/// where the platform does not say which).
pub(crate) type OnClick = dyn Fn(Option<&str>) + Send + Sync;

/// What the notifier task is asked to do.
#[derive(Debug)]
pub enum Request {
    /// Raise, replace or withdraw the model's notification.
    Action(NotificationAction),
    /// A one-off notice (summary, body).
    Notice(String, String),
    /// The dashboard's "Send a test notification".
    Test,
}

/// Where requests for the notifier task go (never blocks; dropped once the task ended).
#[derive(Clone)]
pub struct Requests(mpsc::UnboundedSender<Request>);

impl Requests {
    pub fn send(&self, request: Request) {
        let _ = self.0.send(request);
    }
}

/// Shows and withdraws notifications. Lives on the background thread, in its own task.
pub struct Notifier {
    #[cfg(all(unix, not(target_os = "macos")))]
    desktop: freedesktop::Desktop,
    #[cfg(target_os = "macos")]
    center: Result<macos::MacNotifier, macos::MacError>,
    failed_once: Cell<bool>,
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    on_click: Arc<OnClick>,
    /// Windows: toasts failed once; balloons from now on.
    #[cfg(windows)]
    toasts_unavailable: Cell<bool>,
}

impl Notifier {
    /// Starts the notifier's task on the tray's bus (followed across reconnections).
    /// `on_click` runs when a person clicks a notification: with its session's id, or `None`
    /// for a notification of several sessions. Must run inside a `LocalSet`.
    #[cfg(all(unix, not(target_os = "macos")))]
    pub fn spawn(
        mut bus: crate::bus::BusWatch,
        on_click: impl Fn(Option<&str>) + Send + Sync + 'static,
    ) -> Requests {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let on_click: Arc<OnClick> = Arc::new(on_click);
        tokio::task::spawn_local(async move {
            let mut notifier = Notifier {
                desktop: freedesktop::Desktop::new(on_click),
                failed_once: Cell::new(false),
            };
            // What was asked before the first connection waits for it.
            crate::bus::first(&mut bus).await;
            notifier
                .desktop
                .attach(bus.borrow_and_update().as_ref())
                .await;
            let mut following = true;
            loop {
                tokio::select! {
                    next = crate::bus::next(&mut bus), if following => match next {
                        Some(connection) => notifier.desktop.attach(connection.as_ref()).await,
                        None => following = false,
                    },
                    request = rx.recv() => match request {
                        Some(request) => notifier.handle(request).await,
                        None => break,
                    },
                }
            }
        });
        Requests(tx)
    }

    /// Starts the notifier's task. `on_click` runs when a person clicks a notification
    /// (macOS: it opens the dashboard). Must run inside a `LocalSet`.
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    pub fn spawn(on_click: impl Fn(Option<&str>) + Send + Sync + 'static) -> Requests {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let on_click: Arc<OnClick> = Arc::new(on_click);
        tokio::task::spawn_local(async move {
            let mut notifier = Notifier::new(on_click);
            while let Some(request) = rx.recv().await {
                notifier.handle(request).await;
            }
        });
        Requests(tx)
    }

    async fn handle(&mut self, request: Request) {
        match request {
            Request::Action(NotificationAction::Raise { key, sessions }) => {
                self.raise(&key, &sessions).await;
            }
            Request::Action(NotificationAction::Withdraw { key }) => self.withdraw(&key).await,
            Request::Notice(summary, body) => {
                let (summary, body) = (safe_text::label(&summary), safe_text::body(&body));
                self.notice(&summary, &body).await;
            }
            Request::Test => self.test().await,
        }
    }

    #[cfg(not(all(unix, not(target_os = "macos"))))]
    fn new(on_click: Arc<OnClick>) -> Self {
        Notifier {
            #[cfg(target_os = "macos")]
            center: {
                let click = Arc::clone(&on_click);
                macos::MacNotifier::new(Arc::new(move || click(None)))
            },
            failed_once: Cell::new(false),
            on_click,
            #[cfg(windows)]
            toasts_unavailable: Cell::new(false),
        }
    }

    /// Raises (or replaces) the notification `key`.
    #[cfg(all(unix, not(target_os = "macos")))]
    pub async fn raise(&mut self, key: &str, sessions: &[model::Notified]) {
        let (summary, body) = model::notification_text(sessions);
        let click = match sessions {
            [one] => ("Go to the session", Some(one.session.clone())),
            _ => ("Open Dashboard", None),
        };
        let shown = freedesktop::Shown {
            app_name: APP_NAME,
            summary: &summary,
            body: &body,
            click: Some(click),
        };
        let result = self.desktop.show(Some(key), shown).await;
        self.shown(result);
    }

    /// The dashboard's "Send a test notification": a one-off, so a person can check that
    /// notifications reach them.
    pub async fn test(&mut self) {
        self.notice(
            "Fabric Companion",
            "Test notification: unread mail on the project board will look like this.",
        )
        .await;
    }

    /// A one-off notification (no replacing, no action), e.g. where a session is.
    pub async fn notice(&mut self, summary: &str, body: &str) {
        #[cfg(target_os = "macos")]
        {
            let shown = self
                .mac()
                .map(|center| center.show("notice", summary, body));
            self.shown(shown);
        }
        #[cfg(all(unix, not(target_os = "macos")))]
        {
            let shown = freedesktop::Shown {
                app_name: APP_NAME,
                summary,
                body,
                click: None,
            };
            let result = self.desktop.show(None, shown).await;
            self.shown(result);
        }
        #[cfg(windows)]
        {
            let shown = self.toast_or_balloon(None, summary, body, None);
            self.shown(shown);
        }
    }

    /// Closes the notification `key`, if one is shown.
    #[cfg(all(unix, not(target_os = "macos")))]
    pub async fn withdraw(&mut self, key: &str) {
        self.desktop.withdraw(key).await;
    }

    /// Windows: raises the session's notification as a toast (no replacing, no click action:
    /// notify-rust's toasts have neither), or in the tray icon's balloon where toasts cannot
    /// be shown (replaced by the next, withdrawn with its key; a click jumps to its session,
    /// or opens the dashboard for several).
    #[cfg(windows)]
    pub async fn raise(&mut self, key: &str, sessions: &[model::Notified]) {
        let (summary, body) = model::notification_text(sessions);
        let session = match sessions {
            [one] => Some(one.session.clone()),
            _ => None,
        };
        let shown = self.toast_or_balloon(Some(key), &summary, &body, session);
        self.shown(shown);
    }

    /// Windows: a toast cannot be withdrawn through notify-rust; a balloon can.
    #[cfg(windows)]
    pub async fn withdraw(&mut self, key: &str) {
        balloon::withdraw(key);
    }

    /// Windows: a toast, or once toasts have failed, the tray icon's balloon (said once).
    #[cfg(windows)]
    fn toast_or_balloon(
        &self,
        key: Option<&str>,
        summary: &str,
        body: &str,
        session: Option<String>,
    ) -> Result<(), String> {
        if !self.toasts_unavailable.get() {
            let toast = Notification::new()
                .appname(APP_NAME)
                .app_id(companion_platform::paths::APP_IDENTIFIER)
                .summary(summary)
                .body(body)
                .show();
            match toast {
                Ok(_) => return Ok(()),
                Err(error) => {
                    tracing::warn!(%error, "toasts cannot be shown here; notifications go to the tray icon's balloon");
                    self.toasts_unavailable.set(true);
                }
            }
        }
        balloon::show(key, summary, body, session, Arc::clone(&self.on_click))
            .map_err(|e| e.to_string())
    }

    /// macOS: raises or replaces the notification `key`; a click opens the dashboard.
    #[cfg(target_os = "macos")]
    pub async fn raise(&mut self, key: &str, sessions: &[model::Notified]) {
        let (summary, body) = model::notification_text(sessions);
        let shown = self.mac().map(|center| center.show(key, &summary, &body));
        self.shown(shown);
    }

    /// macOS: removes the session's notification from the screen and Notification Centre.
    #[cfg(target_os = "macos")]
    pub async fn withdraw(&mut self, key: &str) {
        if let Ok(center) = &self.center {
            center.withdraw(key);
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
