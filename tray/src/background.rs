//! The one background thread: a current-thread tokio runtime running the watch-mail engine
//! for the idle sessions, the notifier, and the Fabric pid check.
//!
//! The shell sends [`Command`]s after each snapshot; the thread tells the shell through
//! `on_event` when something needs a fresh snapshot (the watched Fabric pid died, a
//! warning may have expired, the engine said something) or when a notification was clicked.
//!
//! Idle costs nothing: with no session watched, Fabric down and no warning shown, nothing
//! here has a timer. The only timer is the watch interval (the engine's looks and the pid
//! check), as the specification asks.

use std::collections::BTreeMap;
use std::time::Duration;

use companion_core::host::Host;
use companion_core::paths::Paths;
use companion_core::spool::SessionId;
use fabric_client::watch::{Audience, FabricLook, MailWatcher, WatchConfig};
use tokio::sync::mpsc;

use crate::model::NotificationAction;
use crate::notifier::Notifier;

/// What the shell asks of the background thread.
#[derive(Debug)]
pub enum Command {
    /// The sessions to watch now (the engine's set is brought to this).
    Watch(BTreeMap<String, Host>),
    /// The watch interval from the settings.
    Interval(Duration),
    /// What the periodic check should look at: Fabric's pid while it runs, and whether a
    /// warning is shown (it expires after an hour, which no file event says).
    Check {
        fabric_pid: Option<u32>,
        warning: bool,
    },
    /// Notifications to raise or withdraw.
    Notify(Vec<NotificationAction>),
    /// The dashboard's "Send a test notification".
    TestNotification,
    /// A one-off notice (summary, body), e.g. where a session is when its window cannot be
    /// raised.
    Notice(String, String),
    /// Show this view on the StatusNotifierItem (the item shell; the item lives here, on the
    /// bus connection the notifications use).
    #[cfg(all(unix, not(target_os = "macos")))]
    Show(crate::model::TrayView),
    /// Stop everything (children of looks in flight are killed).
    Shutdown,
}

/// What the background thread tells the shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Take a fresh snapshot.
    Refresh,
    /// A session's notification was clicked: jump to it.
    Focus(String),
    /// A notification of several sessions was clicked.
    OpenDashboard,
    /// An item of the StatusNotifierItem's menu was clicked (the model's menu id).
    #[cfg(all(unix, not(target_os = "macos")))]
    Menu(String),
}

/// The handle of the background thread.
pub struct Background {
    commands: mpsc::UnboundedSender<Command>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Background {
    /// Starts the thread.
    pub fn start(
        paths: Paths,
        interval: Duration,
        on_event: impl Fn(Event) + Send + Sync + 'static,
    ) -> std::io::Result<Self> {
        let (commands, rx) = mpsc::unbounded_channel();
        let thread = std::thread::Builder::new()
            .name("background".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        tracing::error!(%error, "cannot start the background runtime");
                        return;
                    }
                };
                let local = tokio::task::LocalSet::new();
                local.block_on(&runtime, run(paths, interval, rx, on_event));
            })?;
        Ok(Background {
            commands,
            thread: Some(thread),
        })
    }

    /// Sends a command (ignored once the thread has ended).
    pub fn send(&self, command: Command) {
        let _ = self.commands.send(command);
    }

    /// Stops the thread and waits for it.
    pub fn shutdown(mut self) {
        let _ = self.commands.send(Command::Shutdown);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The tray's one session-bus connection (notifications, and the item where it is shown),
/// on this thread's runtime; `None` (said once) without a session bus.
#[cfg(all(unix, not(target_os = "macos")))]
async fn session_bus() -> Option<zbus::Connection> {
    match tokio::time::timeout(Duration::from_secs(5), zbus::Connection::session()).await {
        Ok(Ok(bus)) => Some(bus),
        Ok(Err(error)) => {
            tracing::warn!(%error, "no session bus: no notifications and no tray item");
            None
        }
        Err(_) => {
            tracing::warn!(
                "the session bus did not answer in 5 s: no notifications and no tray item"
            );
            None
        }
    }
}

struct Engine {
    watcher: MailWatcher,
    events: mpsc::Receiver<fabric_client::watch::WatchEvent>,
}

fn start_engine(paths: &Paths, interval: Duration) -> Engine {
    let config = WatchConfig::new(paths, interval, Audience::Person);
    let (watcher, events) = MailWatcher::start(config, FabricLook::new());
    Engine { watcher, events }
}

async fn run(
    paths: Paths,
    mut interval: Duration,
    mut commands: mpsc::UnboundedReceiver<Command>,
    on_event: impl Fn(Event) + Send + Sync + 'static,
) {
    let on_event = std::sync::Arc::new(on_event);
    let click = std::sync::Arc::clone(&on_event);
    let on_click = move |session: Option<&str>| {
        click(match session {
            Some(session) => Event::Focus(session.to_string()),
            None => Event::OpenDashboard,
        })
    };
    #[cfg(all(unix, not(target_os = "macos")))]
    let bus = session_bus().await;
    #[cfg(all(unix, not(target_os = "macos")))]
    let mut notifier = Notifier::new(bus.as_ref(), on_click).await;
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    let mut notifier = Notifier::new(on_click).await;
    #[cfg(all(unix, not(target_os = "macos")))]
    let mut item: Option<crate::sni::Sni> = None;
    // The connection the item is made on; dropped after a failure, which is said once.
    #[cfg(all(unix, not(target_os = "macos")))]
    let mut item_bus = bus.clone();
    // The engine starts with the first session to watch, and stops with the last.
    let mut engine: Option<Engine> = None;
    let mut watched: BTreeMap<String, Host> = BTreeMap::new();
    let mut fabric_pid: Option<u32> = None;
    let mut warning = false;
    let mut next_check = tokio::time::Instant::now() + interval;
    loop {
        let checking = fabric_pid.is_some() || warning;
        tokio::select! {
            command = commands.recv() => match command {
                None | Some(Command::Shutdown) => break,
                Some(Command::Watch(wanted)) => {
                    if wanted.is_empty() {
                        if let Some(old) = engine.take() {
                            old.watcher.shutdown().await;
                        }
                    } else {
                        let live = engine.get_or_insert_with(|| start_engine(&paths, interval));
                        for (id, host) in &wanted {
                            if watched.get(id) != Some(host)
                                && let Some(session) = SessionId::new(id)
                            {
                                live.watcher.add_session(session, *host);
                            }
                        }
                        for id in watched.keys().filter(|id| !wanted.contains_key(*id)) {
                            if let Some(session) = SessionId::new(id) {
                                live.watcher.remove_session(&session);
                            }
                        }
                    }
                    watched = wanted;
                }
                Some(Command::Interval(new)) => {
                    if new != interval {
                        interval = new;
                        next_check = tokio::time::Instant::now() + interval;
                        if let Some(old) = engine.take() {
                            old.watcher.shutdown().await;
                            let fresh = start_engine(&paths, interval);
                            for (id, host) in &watched {
                                if let Some(session) = SessionId::new(id) {
                                    fresh.watcher.add_session(session, *host);
                                }
                            }
                            engine = Some(fresh);
                        }
                    }
                }
                Some(Command::Check { fabric_pid: pid, warning: warn }) => {
                    if !checking && (pid.is_some() || warn) {
                        next_check = tokio::time::Instant::now() + interval;
                    }
                    fabric_pid = pid;
                    warning = warn;
                }
                #[cfg(all(unix, not(target_os = "macos")))]
                Some(Command::Show(view)) => match (&mut item, &item_bus) {
                    (Some(item), _) => {
                        if let Err(error) = item.show(&view).await {
                            tracing::warn!(%error, "cannot update the tray item");
                        }
                    }
                    (None, Some(bus)) => {
                        let menu = std::sync::Arc::clone(&on_event);
                        let on_choice = std::sync::Arc::new(move |id: String| menu(Event::Menu(id)));
                        match crate::sni::Sni::start(bus, &view, on_choice).await {
                            Ok(started) => item = Some(started),
                            Err(error) => {
                                tracing::error!(%error, "cannot create the tray item");
                                item_bus = None;
                            }
                        }
                    }
                    (None, None) => {}
                },
                Some(Command::TestNotification) => notifier.test().await,
                Some(Command::Notice(summary, body)) => notifier.notice(&summary, &body).await,
                Some(Command::Notify(actions)) => {
                    for action in actions {
                        match action {
                            NotificationAction::Raise { key, sessions } => {
                                notifier.raise(&key, &sessions).await;
                            }
                            NotificationAction::Withdraw { key } => {
                                notifier.withdraw(&key).await;
                            }
                        }
                    }
                }
            },
            Some(event) = async {
                match engine.as_mut() {
                    Some(engine) => engine.events.recv().await,
                    None => std::future::pending().await,
                }
            } => {
                // The engine's counts reach the tray through board.json; its other news
                // (Fabric gone, a board unreachable) may change the menu.
                tracing::debug!(?event, "watch-mail");
                on_event(Event::Refresh);
            }
            () = tokio::time::sleep_until(next_check), if checking => {
                next_check = tokio::time::Instant::now() + interval;
                let died = fabric_pid.is_some_and(|pid| !companion_core::process::pid_alive(pid));
                if died || warning {
                    on_event(Event::Refresh);
                }
            }
        }
    }
    if let Some(engine) = engine.take() {
        engine.watcher.shutdown().await;
    }
}
