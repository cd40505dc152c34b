//! The GTK-free Linux shell: the tray as a StatusNotifierItem with a dbusmenu menu on the
//! session bus, for desktops where a StatusNotifierWatcher runs (KDE Plasma, GNOME with the
//! AppIndicator extension, XFCE, waybar, …).
//!
//! The item lives on the background thread's runtime, on the same bus connection as the
//! notifications ([`Sni`]); the controller runs on the main thread, fed by a channel
//! ([`run_loop`]). The item registers with the watcher at start and again whenever a watcher
//! (re)appears, so a panel restarted or started after us still shows it.

pub mod item;
pub mod menu;

use std::sync::Arc;

use companion_core::paths::Paths;
use futures_util::StreamExt;
use zbus::Connection;
use zbus::names::WellKnownName;

use crate::background::{Background, Command};
use crate::controller::{Controller, EventSink, Flow, Surface, UserEvent};
use crate::model::{IconState, TrayView};

use item::{ITEM_PATH, Item};
use menu::{DbusMenu, MENU_PATH, Tree};

/// The watcher's bus name.
pub const WATCHER: &str = "org.kde.StatusNotifierWatcher";

#[zbus::proxy(
    interface = "org.kde.StatusNotifierWatcher",
    default_service = "org.kde.StatusNotifierWatcher",
    default_path = "/StatusNotifierWatcher"
)]
trait StatusNotifierWatcher {
    fn register_status_notifier_item(&self, service: &str) -> zbus::Result<()>;
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

/// The item on the bus (lives on the background thread).
pub struct Sni {
    bus: Connection,
    /// The icon the item shows (its pixmaps and tooltip are drawn from it).
    icon: IconState,
}

impl Sni {
    /// Serves the item and its menu on `bus`, owns the item's name and registers it with
    /// the watcher (now if there is one, and each time one appears). `on_choice` gets the
    /// model's menu id of each click. Must run inside a `LocalSet`.
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
        let menu = DbusMenu::new(Tree::of(&view.menu), on_choice);
        bus.object_server().at(MENU_PATH, menu).await?;
        let name = format!("org.kde.StatusNotifierItem-{}-1", std::process::id());
        bus.request_name(WellKnownName::try_from(name.clone())?)
            .await?;
        let watcher = StatusNotifierWatcherProxy::new(bus).await?;
        register(&watcher, &name).await;
        // A watcher that appears (a panel started or restarted) gets the item again.
        let dbus = zbus::fdo::DBusProxy::new(bus).await?;
        let mut appeared = dbus
            .receive_name_owner_changed_with_args(&[(0, WATCHER)])
            .await?;
        tokio::task::spawn_local(async move {
            while let Some(signal) = appeared.next().await {
                if let Ok(args) = signal.args()
                    && args.new_owner().is_some()
                {
                    register(&watcher, &name).await;
                }
            }
        });
        Ok(Sni {
            bus: bus.clone(),
            icon: view.icon.clone(),
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
            current
                .replace(Tree::of(&view.menu))
                .then(|| current.revision())
        };
        if let Some(revision) = revision {
            DbusMenu::layout_updated(menu.signal_emitter(), revision, 0).await?;
        }
        Ok(())
    }
}

async fn register(watcher: &StatusNotifierWatcherProxy<'_>, name: &str) {
    match watcher.register_status_notifier_item(name).await {
        Ok(()) => tracing::info!("the tray item is registered with the StatusNotifierWatcher"),
        Err(error) => tracing::info!(%error, "no StatusNotifierWatcher yet; waiting for one"),
    }
}

/// The tooltip's text: the count, or that nothing is unread.
fn tooltip(view: &TrayView) -> String {
    match view.icon.count_text.as_str() {
        "" => "Nothing unread".into(),
        count => format!("{count} unread"),
    }
}
