//! The one background thread: a current-thread tokio runtime running the watch-mail engine
//! for the idle sessions, the notifier, the tray item (item shell), the Fabric pid check, and
//! the signals that end the tray.
//!
//! The shell sends [`Command`]s after each snapshot; the thread tells the shell through
//! `on_event` when something needs a fresh snapshot (the watched Fabric pid died, a
//! warning may have expired, the engine said something), when a notification or a menu item
//! was clicked, or when a signal asked the tray to end.
//!
//! Nothing here waits on another program inline: the command loop only hands notifications
//! and views to their own tasks ([`crate::notifier`], the item), so a notification server or
//! a tray host that takes a call and never answers (each call is bounded by the bus
//! connection's method timeout, [`crate::bus`]) never holds up the icon, the engine or Quit.
//! Shutting down takes the engine down within [`ENGINE_STOP`] (its children are killed),
//! and [`Background::shutdown`] waits for the thread at most [`SHUTDOWN_WAIT`].
//!
//! Idle costs nothing: with no session watched, Fabric down and no warning shown, nothing
//! here has a timer. The only timer is the watch interval (the engine's looks and the pid
//! check), as the specification asks; while the session bus is lost, its reconnection.

use std::collections::BTreeMap;
use std::time::Duration;

use companion_hosts::host::Host;
use companion_platform::paths::Paths;
use companion_sessions::spool::SessionId;
use fabric_client::deadline;
use fabric_client::watch::{Audience, FabricLook, MailWatcher, WatchConfig};
use tokio::sync::mpsc;

use crate::model::NotificationAction;
use crate::notifier::{Notifier, Request};

/// How long the engine gets to stop (its looks' children killed) before it is dropped, which
/// kills them anyway.
pub const ENGINE_STOP: Duration = Duration::from_millis(800);
/// How long [`Background::shutdown`] waits for the thread.
pub const SHUTDOWN_WAIT: Duration = Duration::from_millis(1500);
/// After a signal asked the tray to end, how long the thread waits for the shell to ask it
/// to stop before it ends the tray itself (a shell stuck in its toolkit must not keep a
/// logout waiting, nor leave the engine's children behind).
pub const SIGNAL_GRACE: Duration = Duration::from_secs(2);

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
    /// A signal (SIGTERM, SIGINT, SIGHUP) asked the tray to end.
    Quit,
}

/// The handle of the background thread.
pub struct Background {
    commands: mpsc::UnboundedSender<Command>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// Closed when the thread ends, however it ends.
    ended: std::sync::mpsc::Receiver<()>,
}

/// Closes the thread's end channel when dropped (a panic included).
struct EndSignal(#[allow(dead_code)] std::sync::mpsc::Sender<()>);

impl Background {
    /// Starts the thread.
    pub fn start(
        paths: Paths,
        interval: Duration,
        on_event: impl Fn(Event) + Send + Sync + 'static,
    ) -> std::io::Result<Self> {
        let (commands, rx) = mpsc::unbounded_channel();
        let (end_tx, ended) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("background".into())
            .spawn(move || {
                let _end = EndSignal(end_tx);
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
                let forced = local.block_on(&runtime, run(paths, interval, rx, on_event));
                // Every task (the engine's looks, the notifier, the item) ends with the
                // runtime: their children are killed on drop.
                drop(local);
                drop(runtime);
                if forced {
                    tracing::warn!("the tray did not end after a signal; ending it now");
                    std::process::exit(0);
                }
            })?;
        Ok(Background {
            commands,
            thread: Some(thread),
            ended,
        })
    }

    /// Sends a command (ignored once the thread has ended).
    pub fn send(&self, command: Command) {
        let _ = self.commands.send(command);
    }

    /// Stops the thread and waits for it, at most [`SHUTDOWN_WAIT`].
    pub fn shutdown(mut self) {
        let _ = self.commands.send(Command::Shutdown);
        match self.ended.recv_timeout(SHUTDOWN_WAIT) {
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                tracing::warn!("the background thread did not stop in time; leaving it");
            }
            Ok(()) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                if let Some(thread) = self.thread.take() {
                    let _ = thread.join();
                }
            }
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

/// Stops the engine, at most [`ENGINE_STOP`]; dropped after that, which kills its looks.
async fn stop_engine(engine: Engine) {
    if tokio::time::timeout(ENGINE_STOP, engine.watcher.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("the watch engine did not stop in time; its looks are killed");
    }
}

/// The signals that end the tray (a logout, `kill`, Ctrl-C, a closed terminal).
#[cfg(unix)]
struct Signals(Vec<tokio::signal::unix::Signal>);

#[cfg(unix)]
impl Signals {
    fn new() -> Self {
        use tokio::signal::unix::{SignalKind, signal};
        let kinds = [
            SignalKind::terminate(),
            SignalKind::interrupt(),
            SignalKind::hangup(),
        ];
        Signals(
            kinds
                .into_iter()
                .filter_map(|kind| match signal(kind) {
                    Ok(signal) => Some(signal),
                    Err(error) => {
                        tracing::warn!(%error, "cannot follow a signal");
                        None
                    }
                })
                .collect(),
        )
    }

    async fn recv(&mut self) {
        if self.0.is_empty() {
            return std::future::pending().await;
        }
        let waits = self.0.iter_mut().map(|s| Box::pin(s.recv()));
        futures_select_all(waits).await;
    }
}

/// Windows: Ctrl-C and Ctrl-Break (a console the tray was started from).
#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn new() -> Self {
        Signals
    }

    async fn recv(&mut self) {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// The first of several futures to finish.
#[cfg(unix)]
async fn futures_select_all<F: std::future::Future + Unpin>(futures: impl Iterator<Item = F>) {
    let mut futures: Vec<F> = futures.collect();
    std::future::poll_fn(move |cx| {
        for future in &mut futures {
            if std::pin::Pin::new(future).poll(cx).is_ready() {
                return std::task::Poll::Ready(());
            }
        }
        std::task::Poll::Pending
    })
    .await
}

/// The thread's work until Shutdown; true when it ended the tray on its own after a signal.
async fn run(
    paths: Paths,
    mut interval: Duration,
    mut commands: mpsc::UnboundedReceiver<Command>,
    on_event: impl Fn(Event) + Send + Sync + 'static,
) -> bool {
    let on_event = std::sync::Arc::new(on_event);
    let click = std::sync::Arc::clone(&on_event);
    let on_click = move |session: Option<&str>| {
        click(match session {
            Some(session) => Event::Focus(session.to_string()),
            None => Event::OpenDashboard,
        })
    };
    // The session bus, connected again whenever it is lost; the notifier and the item follow.
    #[cfg(all(unix, not(target_os = "macos")))]
    let bus = crate::bus::connect_and_keep();
    #[cfg(all(unix, not(target_os = "macos")))]
    let notes = Notifier::spawn(bus.clone(), on_click);
    #[cfg(not(all(unix, not(target_os = "macos"))))]
    let notes = Notifier::spawn(on_click);
    #[cfg(all(unix, not(target_os = "macos")))]
    let views = {
        let menu = std::sync::Arc::clone(&on_event);
        let on_choice = std::sync::Arc::new(move |id: String| menu(Event::Menu(id)));
        crate::sni::spawn_item(bus, on_choice)
    };
    let mut signals = Signals::new();
    let mut quit_asked: Option<tokio::time::Instant> = None;
    // The engine starts with the first session to watch, and stops with the last.
    let mut engine: Option<Engine> = None;
    let mut watched: BTreeMap<String, Host> = BTreeMap::new();
    let mut fabric_pid: Option<u32> = None;
    let mut warning = false;
    let mut next_check = deadline::from_now(interval);
    let forced = loop {
        let checking = fabric_pid.is_some() || warning;
        tokio::select! {
            command = commands.recv() => match command {
                None | Some(Command::Shutdown) => break false,
                Some(Command::Watch(wanted)) => {
                    if wanted.is_empty() {
                        if let Some(old) = engine.take() {
                            stop_engine(old).await;
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
                        next_check = deadline::from_now(interval);
                        if let Some(old) = engine.take() {
                            stop_engine(old).await;
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
                        next_check = deadline::from_now(interval);
                    }
                    fabric_pid = pid;
                    warning = warn;
                }
                #[cfg(all(unix, not(target_os = "macos")))]
                Some(Command::Show(view)) => {
                    let _ = views.send(Some(view));
                }
                Some(Command::TestNotification) => notes.send(Request::Test),
                Some(Command::Notice(summary, body)) => notes.send(Request::Notice(summary, body)),
                Some(Command::Notify(actions)) => {
                    for action in actions {
                        notes.send(Request::Action(action));
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
                next_check = deadline::from_now(interval);
                let died = fabric_pid.is_some_and(|pid| !companion_platform::process::pid_alive(pid));
                if died || warning {
                    on_event(Event::Refresh);
                }
            }
            () = signals.recv(), if quit_asked.is_none() => {
                tracing::info!("asked to end by a signal");
                quit_asked = Some(deadline::from_now(SIGNAL_GRACE));
                on_event(Event::Quit);
            }
            () = async {
                match quit_asked {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => break true,
        }
    };
    if let Some(engine) = engine.take() {
        stop_engine(engine).await;
    }
    forced
}
