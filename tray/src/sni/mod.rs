//! The GTK-free Linux shell: the tray as a StatusNotifierItem with a dbusmenu menu on the
//! session bus, for desktops where a StatusNotifierWatcher runs (KDE Plasma, GNOME with the
//! AppIndicator extension, XFCE, waybar, …).
//!
//! The item lives on the background thread's runtime, on the same bus connection as the
//! notifications ([`Sni`], served by [`spawn_item`]'s task, made again on each new
//! connection); the controller runs on the main thread, fed by a channel ([`run_loop`]). The
//! item is on the bus before any watcher answers; it registers with the watcher in a task of
//! its own ([`keep_registered`]): at start, again whenever a watcher (re)appears or says it
//! dropped our item, and after a failed registration with a backoff. Every call waits at most
//! [`crate::bus::CALL_TIMEOUT`].

pub mod item;
pub mod menu;

use std::sync::Arc;
use std::time::Duration;

use companion_core::paths::Paths;
use futures_util::StreamExt;
use tokio::sync::watch;
use zbus::Connection;
use zbus::names::WellKnownName;

use crate::background::{Background, Command};
use crate::bus::BusWatch;
use crate::controller::{Controller, EventSink, Flow, Surface, UserEvent};
use crate::model::{IconState, TrayView};

use item::{ITEM_PATH, Item};
use menu::{DbusMenu, MENU_PATH};

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
        let item = Item {
            icon: item::pixmaps(&view.icon),
            tooltip: tooltip(view),
        };
        bus.object_server().at(ITEM_PATH, item).await?;
        let menu = DbusMenu::new(&view.menu, on_choice);
        bus.object_server().at(MENU_PATH, menu).await?;
        let name = format!("org.kde.StatusNotifierItem-{}-1", std::process::id());
        bus.request_name(WellKnownName::try_from(name.clone())?)
            .await?;
        let registration = tokio::task::spawn_local(keep_registered(bus.clone(), name));
        Ok(Sni {
            bus: bus.clone(),
            icon: view.icon.clone(),
            registration,
        })
    }

    /// Shows `view`: a new icon is drawn and signalled (`NewIcon`, and `NewToolTip`: the
    /// tooltip says the icon's count), a new menu gets `LayoutUpdated`.
    pub async fn show(&mut self, view: &TrayView) -> zbus::Result<()> {
        let server = self.bus.object_server();
        if view.icon != self.icon {
            let item = server.interface::<_, Item>(ITEM_PATH).await?;
            {
                let mut current = item.get_mut().await;
                current.icon = item::pixmaps(&view.icon);
                current.tooltip = tooltip(view);
            }
            self.icon = view.icon.clone();
            Item::new_icon(item.signal_emitter()).await?;
            Item::new_tool_tip(item.signal_emitter()).await?;
        }
        let menu = server.interface::<_, DbusMenu>(MENU_PATH).await?;
        let revision = {
            let mut current = menu.get_mut().await;
            current.replace(&view.menu).then(|| current.revision())
        };
        if let Some(revision) = revision {
            DbusMenu::layout_updated(menu.signal_emitter(), revision, 0).await?;
        }
        Ok(())
    }
}

/// Keeps the item registered: now, again whenever a watcher appears (a panel started or
/// restarted), again when the watcher says our item was unregistered, and after a failed
/// registration (a watcher that is there but refused or never answered) with a backoff.
/// With no watcher at all it waits for one without a timer.
async fn keep_registered(bus: Connection, name: String) {
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
    loop {
        let retry = match watcher.register_status_notifier_item(&name).await {
            Ok(()) => {
                tracing::info!("the tray item is registered with the StatusNotifierWatcher");
                wait = REGISTER_RETRY_FIRST;
                said = false;
                None
            }
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
                            break;
                        }
                    }
                    None => return,
                },
                signal = unregistered.next() => match signal {
                    Some(signal) => {
                        let ours = signal.args().is_ok_and(|args| {
                            args.service.contains(&name)
                                || (!unique.is_empty() && args.service.contains(&unique))
                        });
                        if ours {
                            tracing::info!("the StatusNotifierWatcher dropped the tray item; registering again");
                            tokio::time::sleep(wait).await;
                            wait = (wait * 2).min(REGISTER_RETRY_MAX);
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

/// The tooltip's text: the count, or that nothing is unread.
fn tooltip(view: &TrayView) -> String {
    match view.icon.count_text.as_str() {
        "" => "Nothing unread".into(),
        count => format!("{count} unread"),
    }
}
