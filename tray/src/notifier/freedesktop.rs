//! Notifications on Linux and the BSDs: `org.freedesktop.Notifications` over the tray's one
//! session-bus connection (the same one that serves the StatusNotifierItem where there is a
//! watcher), on the background thread's tokio runtime: no connection, thread or runtime per
//! notification. Each call waits at most the connection's method timeout
//! ([`crate::bus::CALL_TIMEOUT`]); on a new connection ([`Desktop::attach`]) the client and
//! its signal listeners are made again (the ids on screen are the server's, so they stay).
//!
//! Owns the notification ids: one per key on screen (a new raise of a key replaces it in
//! place, a withdraw closes it), and which session a click on each id jumps to. A click is
//! the server's `ActionInvoked` signal with the default action; `NotificationClosed` forgets
//! the id. Never sends message content: only the summary and body the model wrote.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use futures_util::StreamExt;
use zbus::Connection;
use zbus::Variant;

use crate::safe_text;

/// The freedesktop notification server's interface (the calls and signals we use).
#[zbus::proxy(
    interface = "org.freedesktop.Notifications",
    default_service = "org.freedesktop.Notifications",
    default_path = "/org/freedesktop/Notifications"
)]
trait Notifications {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app_name: &str,
        replaces_id: u32,
        app_icon: &str,
        summary: &str,
        body: &str,
        actions: &[&str],
        hints: HashMap<&str, Variant<'_>>,
        expire_timeout: i32,
    ) -> zbus::Result<u32>;

    fn close_notification(&self, id: u32) -> zbus::Result<()>;

    fn get_capabilities(&self) -> zbus::Result<Vec<String>>;

    #[zbus(signal)]
    fn action_invoked(&self, id: u32, action_key: &str) -> zbus::Result<()>;

    #[zbus(signal)]
    fn notification_closed(&self, id: u32, reason: u32) -> zbus::Result<()>;
}

/// The action key a click on the notification's body sends.
const DEFAULT_ACTION: &str = "default";

/// What a click on a notification asks for: its session, or `None` for several.
type Clicks = Rc<RefCell<HashMap<u32, Option<String>>>>;

/// One notification to show.
pub struct Shown<'a> {
    pub app_name: &'a str,
    pub summary: &'a str,
    pub body: &'a str,
    /// The default action's label and what a click on it means; `None`: no action.
    pub click: Option<(&'a str, Option<String>)>,
}

/// The desktop entry the Linux package installs (`fabric-companion.desktop`): GNOME Shell
/// and Plasma name and badge our notifications by it where it is installed.
const DESKTOP_ENTRY: &str = "fabric-companion";

/// The size of the icon sent with each notification.
const ICON_SIZE: u32 = 64;

/// The hints every notification carries: our desktop entry, and our app icon's pixels
/// (`image-data`), so the right icon shows even where no icon theme has it (a build from
/// source).
fn hints() -> HashMap<&'static str, Variant<'static>> {
    let icon = crate::icon::render(&crate::model::IconState::default(), ICON_SIZE);
    let side = ICON_SIZE as i32;
    let mut hints = HashMap::new();
    hints.insert("desktop-entry", Variant::from(DESKTOP_ENTRY));
    let image = zbus::wire::StructureBuilder::new()
        .add_field(side)
        .add_field(side)
        .add_field(side * 4)
        .add_field(true)
        .add_field(8i32)
        .add_field(4i32)
        .add_field(icon.pixels)
        .build();
    match image {
        Ok(image) => {
            hints.insert("image-data", Variant::from(image));
        }
        Err(error) => tracing::debug!(%error, "no icon with the notification"),
    }
    hints
}

/// The notification client. Lives on the background thread (inside its `LocalSet`).
pub struct Desktop {
    proxy: Option<NotificationsProxy<'static>>,
    /// Key → the id on screen.
    ids: HashMap<String, u32>,
    clicks: Clicks,
    on_click: Arc<super::OnClick>,
    /// The tasks following the server's signals on the current connection.
    listeners: Vec<tokio::task::JoinHandle<()>>,
    /// Whether the server reads bodies as markup (`body-markup`), once it said.
    markup: Option<bool>,
}

impl Drop for Desktop {
    fn drop(&mut self) {
        for task in &self.listeners {
            task.abort();
        }
    }
}

impl Desktop {
    /// A client with no bus yet (every show fails with that reason until [`Desktop::attach`]).
    /// `on_click` runs for a click on a notification's default action.
    pub fn new(on_click: Arc<super::OnClick>) -> Self {
        Desktop {
            proxy: None,
            markup: None,
            ids: HashMap::new(),
            clicks: Rc::default(),
            on_click,
            listeners: Vec::new(),
        }
    }

    /// Uses `bus` from now on (`None`: the bus is lost).
    pub async fn attach(&mut self, bus: Option<&Connection>) {
        for task in self.listeners.drain(..) {
            task.abort();
        }
        self.proxy = None;
        self.markup = None;
        let Some(bus) = bus else { return };
        let built = NotificationsProxy::builder(bus)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await;
        match built {
            Ok(proxy) => {
                self.listeners =
                    listen(&proxy, Rc::clone(&self.clicks), Arc::clone(&self.on_click)).await;
                self.proxy = Some(proxy);
            }
            Err(error) => tracing::warn!(%error, "no notification proxy"),
        }
    }

    /// Shows a notification; with `key`, it replaces the one of that key on screen.
    pub async fn show(&mut self, key: Option<&str>, shown: Shown<'_>) -> Result<(), String> {
        let proxy = self.proxy.as_ref().ok_or("no session bus")?;
        let replaces = key.and_then(|k| self.ids.get(k)).copied().unwrap_or(0);
        let action_label = shown
            .click
            .as_ref()
            .map(|(label, _)| safe_text::label(label));
        let actions: Vec<&str> = match &action_label {
            Some(label) => vec![DEFAULT_ACTION, label],
            None => Vec::new(),
        };
        if self.markup.is_none() {
            // Asked once per connection (a failure is asked again at the next one).
            match proxy.get_capabilities().await {
                Ok(capabilities) => {
                    self.markup = Some(capabilities.iter().any(|c| c == "body-markup"));
                }
                Err(error) => tracing::debug!(%error, "the notification server's capabilities"),
            }
        }
        let mut body = safe_text::body(shown.body);
        if self.markup == Some(true) {
            body = safe_text::markup_escaped(&body);
        }
        let id = proxy
            .notify(
                &safe_text::label(shown.app_name),
                replaces,
                "",
                &safe_text::label(shown.summary),
                &body,
                &actions,
                hints(),
                -1,
            )
            .await
            .map_err(|error| error.to_string())?;
        if let Some(key) = key {
            self.ids.insert(key.to_string(), id);
        }
        let mut clicks = self.clicks.borrow_mut();
        match shown.click {
            Some((_, target)) => clicks.insert(id, target),
            None => clicks.remove(&id),
        };
        Ok(())
    }

    /// Closes the notification of `key`, if one is on screen.
    pub async fn withdraw(&mut self, key: &str) {
        let (Some(id), Some(proxy)) = (self.ids.remove(key), self.proxy.as_ref()) else {
            return;
        };
        self.clicks.borrow_mut().remove(&id);
        if let Err(error) = proxy.close_notification(id).await {
            tracing::debug!(%error, "closing a notification");
        }
    }
}

/// Follows the server's clicks and closes for as long as the connection lives (the tasks
/// doing it).
async fn listen(
    proxy: &NotificationsProxy<'static>,
    clicks: Clicks,
    on_click: Arc<super::OnClick>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let (invoked, closed) = match (
        proxy.receive_action_invoked().await,
        proxy.receive_notification_closed().await,
    ) {
        (Ok(invoked), Ok(closed)) => (invoked, closed),
        (Err(error), _) | (_, Err(error)) => {
            tracing::warn!(%error, "notification clicks will not be followed");
            return Vec::new();
        }
    };
    let on_invoked = Rc::clone(&clicks);
    let clicked = tokio::task::spawn_local(invoked.for_each(move |signal| {
        if let Ok(args) = signal.args()
            && args.action_key == DEFAULT_ACTION
            && let Some(target) = on_invoked.borrow().get(&args.id)
        {
            on_click(target.as_deref());
        }
        std::future::ready(())
    }));
    let forgotten = tokio::task::spawn_local(closed.for_each(move |signal| {
        if let Ok(args) = signal.args() {
            clicks.borrow_mut().remove(&args.id);
        }
        std::future::ready(())
    }));
    vec![clicked, forgotten]
}
