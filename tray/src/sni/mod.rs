//! The GTK-free Linux shell: the tray as a StatusNotifierItem with a dbusmenu menu on the
//! session bus, for desktops where a StatusNotifierWatcher runs (KDE Plasma, GNOME with the
//! AppIndicator extension, XFCE, waybar, …).
//!
//! The item lives on the background thread's runtime, on the same bus connection as the
//! notifications ([`Sni`], served by [`spawn_item`]'s task, made again on each new
//! connection); the controller runs on the main thread, fed by a channel ([`run_loop`]). The
//! item is on the bus before any watcher answers; it registers with the watcher in a task of
//! its own ([`keep_registered`]): at start, again whenever a watcher (re)appears or says it
//! dropped our item, after a failed registration, and when, once registered, the watcher
//! does not list it or no host looked at it (the item is not shown) — each again with a
//! backoff. Every call waits at most [`crate::bus::CALL_TIMEOUT`]. What the watcher lists and
//! signals is read by [`watcher_entry`] (every form real watchers write, down to
//! AppIndicator 66's bare path, which only says "an item at this path": another item's
//! `Unregistered` in that form is taken as ours only when the list no longer has it).
//!
//! The item registers by its object path on our connection's unique name, and owns no
//! `org.kde.StatusNotifierItem-<pid>-<n>` name. Under a well-known name, GNOME's AppIndicator
//! extension (v46, Debian 12's) watches that name, and when its own lookup of the name ends
//! after our answer to its property request, it resets the item's `Id` and `Menu` and then
//! fails on them ("Argument two may not be null", upstream
//! ubuntu/gnome-shell-extension-appindicator#386, fixed in v47): the item is never shown.
//! Registered by path, the extension has no name to watch (and its start-up search finds the
//! same item under the same id). KDE Plasma, the AppIndicator extension, waybar, XFCE's
//! plugin and Debian's `status-notifier-watcher` all take a path (libappindicator registers
//! so). Updates also go out as `PropertiesChanged` with the new pixels, beside the spec's
//! `NewIcon`: a host that follows properties (the AppIndicator extension) shows the new count
//! at once instead of after its 100 ms gathering of `New*` signals.

pub mod item;
pub mod menu;
pub mod watcher_entry;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use companion_platform::paths::Paths;
use futures_util::StreamExt;
use tokio::sync::watch;
use zbus::Connection;

use crate::background::{Background, Command};
use crate::bus::BusWatch;
use crate::controller::{Controller, EventSink, Flow, Surface, UserEvent};
use crate::model::{IconState, TrayView};

use item::{ITEM_PATH, Item};
use menu::{DbusMenu, MENU_PATH};
use watcher_entry::{Ours, WatcherEntry};

/// The watcher's bus name.
pub const WATCHER: &str = "org.kde.StatusNotifierWatcher";

#[zbus::proxy(
    interface = "org.kde.StatusNotifierWatcher",
    default_service = "org.kde.StatusNotifierWatcher",
    default_path = "/StatusNotifierWatcher"
)]
trait StatusNotifierWatcher {
    fn register_status_notifier_item(&self, service: &str) -> zbus::Result<()>;

    #[zbus(signal)]
    fn status_notifier_item_unregistered(&self, service: &str) -> zbus::Result<()>;

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> zbus::Result<Vec<String>>;

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> zbus::Result<bool>;
}

/// Runs the tray until Quit: the controller on this thread, fed by a channel.
pub fn run_loop(paths: Paths) -> anyhow::Result<()> {
    let (tx, rx) = std::sync::mpsc::channel();
    let send: EventSink = Arc::new(move |event| {
        let _ = tx.send(event);
    });
    let mut controller = Controller::start(paths, send, Box::new(ItemSurface))?;
    let mut flow = controller.handle(UserEvent::Refresh);
    while flow == Flow::Continue {
        let Ok(event) = rx.recv() else { break };
        flow = controller.handle(event);
    }
    controller.stop();
    Ok(())
}

/// The shell's side: views go to the background thread, which owns the item.
struct ItemSurface;

impl Surface for ItemSurface {
    fn show(&mut self, background: &Background, previous: Option<&TrayView>, view: &TrayView) {
        if previous != Some(view) {
            background.send(Command::Show(view.clone()));
        }
    }

    fn close(&mut self) {}
}

/// The first wait before registering again after a failed registration; it doubles up to
/// [`REGISTER_RETRY_MAX`].
pub const REGISTER_RETRY_FIRST: Duration = Duration::from_millis(500);
/// The longest wait between two registrations.
pub const REGISTER_RETRY_MAX: Duration = Duration::from_secs(30);
/// How long after registering the watcher's list and the hosts' reads are looked at.
pub const VERIFY_AFTER: Duration = Duration::from_millis(1500);
/// How many registrations in a row may end unshown before we stop trying (until a watcher
/// appears or drops the item again): no endless timer for a host that never shows items.
pub const VERIFY_ATTEMPTS: u32 = 6;

/// Where the controller's views go (the latest one wins).
pub type Views = watch::Sender<Option<TrayView>>;

/// Starts the item's task: it serves the latest view on the current bus connection, made
/// again on each new connection. `on_choice` gets the model's menu id of each click. Must
/// run inside a `LocalSet`.
pub fn spawn_item(bus: BusWatch, on_choice: Arc<dyn Fn(String) + Send + Sync>) -> Views {
    let (views, rx) = watch::channel(None);
    tokio::task::spawn_local(serve(bus, rx, on_choice));
    views
}

async fn serve(
    mut bus: BusWatch,
    mut views: watch::Receiver<Option<TrayView>>,
    on_choice: Arc<dyn Fn(String) + Send + Sync>,
) {
    let mut connection: Option<Connection> = bus.borrow_and_update().clone();
    let mut item: Option<Sni> = None;
    let mut following = true;
    let mut said_failure = false;
    loop {
        if item.is_none()
            && let Some(connection) = &connection
            && let Some(view) = views.borrow_and_update().clone()
        {
            match Sni::start(connection, &view, Arc::clone(&on_choice)).await {
                Ok(started) => {
                    item = Some(started);
                    said_failure = false;
                }
                Err(error) => {
                    if !said_failure {
                        tracing::error!(%error, "cannot create the tray item");
                        said_failure = true;
                    }
                }
            }
        }
        tokio::select! {
            next = crate::bus::next(&mut bus), if following => match next {
                Some(new) => {
                    // The old connection's objects went with it.
                    item = None;
                    connection = new;
                }
                None => following = false,
            },
            changed = views.changed() => {
                if changed.is_err() {
                    break;
                }
                let view = views.borrow_and_update().clone();
                if let (Some(shown), Some(view)) = (item.as_mut(), view)
                    && let Err(error) = shown.show(&view).await
                {
                    tracing::warn!(%error, "cannot update the tray item");
                }
            }
        }
    }
}

/// The item on the bus (lives on the background thread).
pub struct Sni {
    bus: Connection,
    /// The icon the item shows (its pixmaps and tooltip are drawn from it).
    icon: IconState,
    /// Keeps the item registered with the watcher.
    registration: tokio::task::JoinHandle<()>,
}

impl Drop for Sni {
    fn drop(&mut self) {
        self.registration.abort();
    }
}

impl Sni {
    /// Serves the item and its menu on `bus`, owns the item's name, and keeps it registered
    /// with the watcher in a task of its own (the icon is on the bus before any watcher has
    /// answered). `on_choice` gets the model's menu id of each click.
    pub async fn start(
        bus: &Connection,
        view: &TrayView,
        on_choice: Arc<dyn Fn(String) + Send + Sync>,
    ) -> zbus::Result<Sni> {
        let reads = Arc::new(AtomicU64::new(0));
        let item = Item {
            icon: item::pixmaps(&view.icon),
            tooltip: tooltip(view),
            accessible: accessible_description(view),
            reads: Arc::clone(&reads),
        };
        bus.object_server().at(ITEM_PATH, item).await?;
        let menu = DbusMenu::new(&view.menu, on_choice);
        bus.object_server().at(MENU_PATH, menu).await?;
        let registration = tokio::task::spawn_local(keep_registered(bus.clone(), reads));
        Ok(Sni {
            bus: bus.clone(),
            icon: view.icon.clone(),
            registration,
        })
    }

    /// Shows `view`: a new icon is drawn and signalled (`PropertiesChanged` with the new
    /// pixels, tooltip and accessible description, then `NewIcon` and `NewToolTip`: the tooltip says the icon's
    /// count), a new menu gets `LayoutUpdated`.
    pub async fn show(&mut self, view: &TrayView) -> zbus::Result<()> {
        let server = self.bus.object_server();
        if view.icon != self.icon {
            let item = server.interface::<_, Item>(ITEM_PATH).await?;
            {
                let mut current = item.get_mut().await;
                current.icon = item::pixmaps(&view.icon);
                current.tooltip = tooltip(view);
                current.accessible = accessible_description(view);
            }
            self.icon = view.icon.clone();
            {
                let current = item.get().await;
                current.icon_pixmap_changed(item.signal_emitter()).await?;
                current.tool_tip_changed(item.signal_emitter()).await?;
                current
                    .icon_accessible_desc_changed(item.signal_emitter())
                    .await?;
                current
                    .attention_accessible_desc_changed(item.signal_emitter())
                    .await?;
            }
            Item::new_icon(item.signal_emitter()).await?;
            Item::new_tool_tip(item.signal_emitter()).await?;
        }
        let menu = server.interface::<_, DbusMenu>(MENU_PATH).await?;
        let update = menu.get_mut().await.replace(&view.menu);
        if let Some(update) = update {
            if !update.updated.is_empty() || !update.removed.is_empty() {
                DbusMenu::items_properties_updated(
                    menu.signal_emitter(),
                    update.updated,
                    update.removed,
                )
                .await?;
            }
            DbusMenu::layout_updated(menu.signal_emitter(), update.revision, 0).await?;
        }
        Ok(())
    }
}

/// Why a registration did not end with the item shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unshown {
    /// The watcher took the call but does not list the item.
    NotListed,
    /// A host is registered, and none read the item.
    NotLookedAt,
}

/// After a registration: whether the watcher lists the item and, where a host is registered,
/// a host read it (`reads` went past `before`).
async fn verify(
    watcher: &StatusNotifierWatcherProxy<'_>,
    unique: &str,
    reads: &AtomicU64,
    before: u64,
) -> Result<(), Unshown> {
    tokio::time::sleep(VERIFY_AFTER).await;
    // A watcher that does not answer these is taken at its word (it took the registration).
    if let Ok(items) = watcher.registered_status_notifier_items().await
        && !watcher_entry::listed(&items, unique, ITEM_PATH).maybe()
    {
        return Err(Unshown::NotListed);
    }
    let host = watcher
        .is_status_notifier_host_registered()
        .await
        .unwrap_or(false);
    if host && reads.load(Ordering::Relaxed) == before {
        return Err(Unshown::NotLookedAt);
    }
    Ok(())
}

/// Keeps the item registered: now, again whenever a watcher appears (a panel started or
/// restarted), again when the watcher says our item was unregistered, after a failed
/// registration (a watcher that is there but refused or never answered), and when a
/// registration did not end with the item shown ([`verify`]), each with a backoff. With no
/// watcher at all it waits for one without a timer; after [`VERIFY_ATTEMPTS`] unshown
/// registrations in a row it waits for the watcher's next move.
async fn keep_registered(bus: Connection, reads: Arc<AtomicU64>) {
    let (dbus, watcher) = match (
        zbus::fdo::DBusProxy::new(&bus).await,
        StatusNotifierWatcherProxy::builder(&bus)
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await,
    ) {
        (Ok(dbus), Ok(watcher)) => (dbus, watcher),
        (Err(error), _) | (_, Err(error)) => {
            tracing::error!(%error, "cannot follow the StatusNotifierWatcher");
            return;
        }
    };
    let (mut appeared, mut unregistered) = match (
        dbus.receive_name_owner_changed_with_args(&[(0, WATCHER)])
            .await,
        watcher.receive_status_notifier_item_unregistered().await,
    ) {
        (Ok(appeared), Ok(unregistered)) => (appeared, unregistered),
        (Err(error), _) | (_, Err(error)) => {
            tracing::error!(%error, "cannot follow the StatusNotifierWatcher");
            return;
        }
    };
    let unique = bus
        .unique_name()
        .map(ToString::to_string)
        .unwrap_or_default();
    let mut wait = REGISTER_RETRY_FIRST;
    let mut said = false;
    let mut unshown = 0u32;
    let mut registrations = 0u64;
    loop {
        let before = reads.load(Ordering::Relaxed);
        registrations += 1;
        tracing::info!(
            registration = registrations,
            "registering the tray item with the StatusNotifierWatcher"
        );
        let retry = match watcher.register_status_notifier_item(ITEM_PATH).await {
            Ok(()) => match verify(&watcher, &unique, &reads, before).await {
                Ok(()) => {
                    tracing::info!(
                        "the tray item is registered with the StatusNotifierWatcher and shown"
                    );
                    wait = REGISTER_RETRY_FIRST;
                    said = false;
                    unshown = 0;
                    None
                }
                Err(why) => {
                    unshown += 1;
                    if unshown > VERIFY_ATTEMPTS {
                        tracing::warn!(
                            ?why,
                            "the tray item is still not shown; waiting for the watcher to change"
                        );
                        None
                    } else {
                        tracing::info!(
                            ?why,
                            attempt = unshown,
                            "the tray item is not shown; registering again"
                        );
                        let retry = wait;
                        wait = (wait * 2).min(REGISTER_RETRY_MAX);
                        Some(retry)
                    }
                }
            },
            Err(error) => {
                let present = dbus
                    .name_has_owner(WATCHER.try_into().expect("a valid bus name"))
                    .await
                    .unwrap_or(false);
                if !said {
                    if present {
                        tracing::warn!(%error, "the StatusNotifierWatcher did not take the tray item; trying again");
                    } else {
                        tracing::info!("no StatusNotifierWatcher yet; waiting for one");
                    }
                    said = true;
                }
                present.then(|| {
                    let retry = wait;
                    wait = (wait * 2).min(REGISTER_RETRY_MAX);
                    retry
                })
            }
        };
        // Whatever comes first: a watcher appears, ours is dropped, or it is time to retry.
        loop {
            tokio::select! {
                signal = appeared.next() => match signal {
                    Some(signal) => {
                        if signal.args().is_ok_and(|args| args.new_owner().is_some()) {
                            wait = REGISTER_RETRY_FIRST;
                            unshown = 0;
                            break;
                        }
                    }
                    None => return,
                },
                signal = unregistered.next() => match signal {
                    Some(signal) => {
                        let ours = signal.args().map_or(Ours::No, |args| {
                            WatcherEntry::parse(args.service).ours(&unique, ITEM_PATH)
                        });
                        // The path alone (AppIndicator 66) may be another item's: only when
                        // the watcher no longer lists ours is it ours that went.
                        let dropped = match ours {
                            Ours::Yes => true,
                            Ours::PathOnly => !watcher
                                .registered_status_notifier_items()
                                .await
                                .is_ok_and(|items| {
                                    watcher_entry::listed(&items, &unique, ITEM_PATH).maybe()
                                }),
                            Ours::No => false,
                        };
                        if dropped {
                            tracing::info!("the StatusNotifierWatcher dropped the tray item; registering again");
                            tokio::time::sleep(wait).await;
                            wait = (wait * 2).min(REGISTER_RETRY_MAX);
                            unshown = 0;
                            break;
                        }
                    }
                    None => return,
                },
                () = async {
                    match retry {
                        Some(after) => tokio::time::sleep(after).await,
                        None => std::future::pending().await,
                    }
                } => break,
            }
        }
    }
}

/// The tooltip's text: the count, or that nothing is unread; and that a session needs you.
fn tooltip(view: &TrayView) -> String {
    let unread = match view.icon.count_text.as_str() {
        "" => "Nothing unread".to_string(),
        count => format!("{count} unread"),
    };
    if view.icon.needs_you {
        format!("A session needs you · {unread}")
    } else {
        unread
    }
}

/// The icon's description for screen readers: the name, the count, and whether a session
/// needs you (the icon shows these as a number and a mark).
fn accessible_description(view: &TrayView) -> String {
    let unread = match view.icon.count_text.as_str() {
        "" => "nothing unread".to_string(),
        count => format!("{count} unread"),
    };
    if view.icon.needs_you {
        format!("Fabric Companion: {unread}, a session needs you")
    } else {
        format!("Fabric Companion: {unread}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(count: &str, needs_you: bool) -> TrayView {
        TrayView {
            icon: IconState {
                count_text: count.into(),
                needs_you,
                ..IconState::default()
            },
            menu: Vec::new(),
            title: None,
        }
    }

    #[test]
    fn the_accessible_description_says_the_count_and_who_needs_you() {
        assert_eq!(
            accessible_description(&view("", false)),
            "Fabric Companion: nothing unread"
        );
        assert_eq!(
            accessible_description(&view("3", false)),
            "Fabric Companion: 3 unread"
        );
        assert_eq!(
            accessible_description(&view("99+", true)),
            "Fabric Companion: 99+ unread, a session needs you"
        );
    }
}
