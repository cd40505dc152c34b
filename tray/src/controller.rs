//! The tray's controller, the same on every shell: on each event it asks the reader thread
//! ([`crate::reader`]) for a snapshot, lets the model decide on the reading, hands the view
//! to the shell's [`Surface`] and the notifications to the background thread, and runs menu
//! actions and jumps to sessions. Nothing here waits on another program: the shell's thread
//! stays free for the menu. A menu id runs only while the menu shown holds it (a click on an
//! item that has gone since does nothing).
//!
//! Owns the wiring of file events and the background thread to the model. Never draws
//! anything itself: the shells ([`crate::shell`]: tray-icon; [`crate::sni`]: a
//! StatusNotifierItem on the session bus) only apply a [`TrayView`].

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use companion_desktop::{file_watch, watched};
use companion_hosts::host::Host;
use companion_platform::paths::Paths;
use companion_sessions::settings;

use crate::background::{self, Background, Command};
use crate::model::{self, Action, Choice, MenuLine, Model, TrayView};
use crate::reader::{Reader, Reading};
use crate::waker::Waker;
use crate::{clock, launcher, offers, tray_host};

/// Events the controller receives from other threads (and the shell).
#[derive(Debug, Clone)]
pub enum UserEvent {
    /// Files changed, or the background thread wants a fresh snapshot.
    Refresh,
    /// The reader's snapshot, to decide on.
    Read(Box<Reading>),
    /// A signal asked the tray to end.
    Quit,
    /// A menu item was chosen (the model's menu id).
    Menu(String),
    /// Jump to a session's window (its notification was clicked).
    Focus(String),
    /// Open the dashboard (a notification of several sessions was clicked).
    OpenDashboard,
    /// A jump finished (it runs on its own thread: tmux and the window manager may take a
    /// moment); `from_notification` opens the dashboard when no window was raised.
    Focused {
        result: Result<session_focus::Raised, session_focus::FocusError>,
        from_notification: bool,
    },
    /// The start-up check found no tray host on this desktop.
    NoTrayHost,
    /// The start-up check found a tray host.
    TrayHost,
}

/// How events reach the controller's thread (the shell's event loop or channel).
pub type EventSink = Arc<dyn Fn(UserEvent) + Send + Sync>;

/// Whether the shell's loop goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

/// What a shell draws: the icon and the menu of a view.
pub trait Surface {
    /// Shows `view`; `previous` is what was shown (`None` the first time), so a shell
    /// replaces only what changed. `background` is there for shells that live on it.
    fn show(&mut self, background: &Background, previous: Option<&TrayView>, view: &TrayView);
    /// Takes the icon away.
    fn close(&mut self);
}

/// The controller (lives on the shell's thread).
pub struct Controller {
    paths: Paths,
    model: Model,
    surface: Box<dyn Surface>,
    shown: Option<TrayView>,
    background: Option<Background>,
    interval: Duration,
    dashboard_opened_for_no_tray: bool,
    /// Hosts whose first-run offer was notified in this run.
    offers_notified: BTreeSet<Host>,
    /// Why a window cannot be raised here was said once already.
    said_why_not_raised: bool,
    send: EventSink,
    reader: Reader,
    /// Wakes the model when a wait's grace or a minute of the menu's count runs out.
    waker: Waker,
}

impl Controller {
    /// Starts the file watcher, the background thread and (on Linux) the tray-host check;
    /// everything they notice comes back through `send`.
    pub fn start(paths: Paths, send: EventSink, surface: Box<dyn Surface>) -> anyhow::Result<Self> {
        // Our own folders exist from the start, so they can be watched.
        for dir in [&paths.cache_dir, &paths.config_dir] {
            let _ = companion_platform::fsutil::create_private_dir(dir);
        }
        let refresh = Arc::clone(&send);
        // A short quiet time: the icon's count follows a board change within ~100 ms (the
        // reader coalesces the rest of a burst into one more read).
        file_watch::spawn_with(
            watched::watched_folders(&paths),
            file_watch::PROMPT_DEBOUNCE,
            move |_changes| {
                refresh(UserEvent::Refresh);
            },
        )?;
        let interval = Duration::from_secs(
            settings::load(&settings::settings_path(&paths)).effective_interval_secs(),
        );
        let from_background = Arc::clone(&send);
        let background = Background::start(paths.clone(), interval, move |event| {
            from_background(match event {
                background::Event::Refresh => UserEvent::Refresh,
                background::Event::Focus(session) => UserEvent::Focus(session),
                background::Event::OpenDashboard => UserEvent::OpenDashboard,
                #[cfg(all(unix, not(target_os = "macos")))]
                background::Event::Menu(id) => UserEvent::Menu(id),
                background::Event::Quit => UserEvent::Quit,
            });
        })?;
        let deliver = Arc::clone(&send);
        let reader = Reader::start(paths.clone(), move |reading| {
            deliver(UserEvent::Read(Box::new(reading)));
        })?;
        let wake = Arc::clone(&send);
        let waker = Waker::start(move || wake(UserEvent::Refresh))?;
        if cfg!(target_os = "linux") {
            spawn_tray_host_check(Arc::clone(&send));
        }
        Ok(Controller {
            paths,
            model: Model::default(),
            surface,
            shown: None,
            background: Some(background),
            interval,
            dashboard_opened_for_no_tray: false,
            offers_notified: BTreeSet::new(),
            said_why_not_raised: false,
            send,
            reader,
            waker,
        })
    }

    /// Handles one event.
    pub fn handle(&mut self, event: UserEvent) -> Flow {
        match event {
            UserEvent::Refresh => self.reader.request(),
            UserEvent::Read(reading) => self.refresh(*reading),
            UserEvent::Quit => return Flow::Quit,
            UserEvent::Focus(session) => self.focus(session, true),
            UserEvent::OpenDashboard => open_dashboard(),
            UserEvent::Focused {
                result,
                from_notification,
            } => self.focused(result, from_notification),
            UserEvent::NoTrayHost => self.no_tray_host(),
            UserEvent::TrayHost => {
                // The icon shows: should the host go away again, say so again.
                let _ = std::fs::remove_file(self.paths.told_no_tray());
            }
            UserEvent::Menu(id) if !self.offered(&id) => {
                tracing::info!("a menu item that is no longer in the menu; nothing done");
            }
            UserEvent::Menu(id) => match Choice::from_id(&id) {
                Some(Choice::Action(action)) if self.act(action) => return Flow::Quit,
                Some(Choice::Action(_)) | None => {}
                Some(Choice::Focus(session)) => self.focus(session, false),
            },
        }
        Flow::Continue
    }

    /// Decides on a reading, and applies the view (first: the icon never waits on a
    /// notification) and the notifications.
    fn refresh(&mut self, reading: Reading) {
        if reading.looked_at_pending {
            // The count first; the rest once the desktop said which session is looked at.
            if let Some(shown) = &self.shown {
                let icon = model::icon_state(&reading.snapshot);
                if icon != shown.icon {
                    let mut view = shown.clone();
                    view.icon = icon;
                    self.apply(view);
                }
            }
            return;
        }
        let Reading {
            snapshot: snap,
            settings,
            fabric_pid,
            now,
            looked_at_pending: _,
        } = reading;
        let decision = model::decide(&self.model, &snap, now.max(0) as u64);
        tracing::debug!(
            looked_at = snap.looked_at.is_some(),
            notifications = decision.notifications.len(),
            "decided"
        );
        self.model = decision.model;
        self.waker.set(decision.wake_at);
        let interval = Duration::from_secs(settings.effective_interval_secs());
        // The first-run offer: menu items while it holds, one notification per host per run.
        let dismissed = settings.dismissed_hook_offers.iter().copied().collect();
        let offers = offers::decide_offers(&snap, &dismissed, &self.offers_notified);
        self.offers_notified = offers.notified;
        let mut view = decision.view;
        view.menu = offers::with_updates(
            offers::with_offers(view.menu, &offers.menu),
            &offers::updatable(&snap),
        );
        self.apply(view);
        let Some(background) = &self.background else {
            return;
        };
        if interval != self.interval {
            self.interval = interval;
            background.send(Command::Interval(interval));
        }
        background.send(Command::Watch(model::watch_set(&snap)));
        background.send(Command::Check {
            fabric_pid,
            warning: snap.recent_failure,
        });
        if !decision.notifications.is_empty() {
            background.send(Command::Notify(decision.notifications));
        }
        if !offers.notify.is_empty() {
            let (summary, body) = offers::offer_notification(&offers.notify);
            background.send(Command::Notice(summary, body));
        }
        // The dashboard asks for a test notification by dropping a request file; only the
        // tray notifies. Taking the file first makes one request one notification.
        let request = self.paths.test_notification_request();
        if std::fs::remove_file(&request).is_ok() {
            background.send(Command::TestNotification);
        }
    }

    /// Whether the menu shown holds an enabled item with this menu id.
    fn offered(&self, id: &str) -> bool {
        fn holds(lines: &[MenuLine], id: &str) -> bool {
            lines.iter().any(|line| match line {
                MenuLine::Session { session, .. } => Choice::Focus(session.clone()).id() == id,
                MenuLine::Item {
                    action, enabled, ..
                } => *enabled && action.id() == id,
                MenuLine::Submenu { items, .. } => holds(items, id),
                MenuLine::Info(_) | MenuLine::Separator => false,
            })
        }
        self.shown
            .as_ref()
            .is_some_and(|view| holds(&view.menu, id))
    }

    fn apply(&mut self, view: TrayView) {
        let previous = self.shown.take();
        if let Some(background) = &self.background {
            self.surface.show(background, previous.as_ref(), &view);
        }
        self.shown = Some(view);
    }

    /// Runs a menu action; true when the tray should quit.
    fn act(&mut self, action: Action) -> bool {
        let now = clock::now_unix();
        let pause = |until: Option<i64>| {
            let path = settings::settings_path(&self.paths);
            let mut current = settings::load(&path);
            current.notifications_paused_until = until.map(clock::format_rfc3339);
            if let Err(error) = settings::save(&path, &current) {
                tracing::warn!(%error, "cannot save the pause");
            }
        };
        match action {
            Action::PauseHour => pause(Some(now + 3600)),
            Action::PauseUntilTomorrow => pause(Some(clock::next_local_midnight(now))),
            Action::Resume => pause(None),
            Action::OpenDashboard => open_dashboard(),
            Action::SetUpHooks(host) => match launcher::open_dashboard_hooks(host) {
                Ok(program) => tracing::info!(program = %program.display(), "dashboard started"),
                Err(error) => tracing::warn!(%error, "cannot open the dashboard"),
            },
            Action::DismissOffer(host) => {
                let path = settings::settings_path(&self.paths);
                let mut current = settings::load(&path);
                if !current.dismissed_hook_offers.contains(&host) {
                    current.dismissed_hook_offers.push(host);
                }
                if let Err(error) = settings::save(&path, &current) {
                    tracing::warn!(%error, "cannot save the dismissed offer");
                }
            }
            Action::OpenHookLog => {
                let log = self.paths.hook_log();
                if let Err(error) = launcher::open_file(&log) {
                    tracing::warn!(%error, "cannot open the hook log");
                }
            }
            Action::Quit => return true,
        }
        tracing::info!(action = action.id(), "menu action");
        false
    }

    /// Jumps to a session's window on a thread of its own; the result comes back as
    /// [`UserEvent::Focused`].
    fn focus(&self, session: String, from_notification: bool) {
        let sessions_dir = self.paths.sessions_dir();
        let remotes_file = companion_remotes::board::file_path(&self.paths);
        let send = Arc::clone(&self.send);
        let spawned = std::thread::Builder::new()
            .name("focus".into())
            .spawn(move || {
                let result = match crate::remotes::split_session_id(&session) {
                    Some((remote, id)) => {
                        companion_remotes::jump::jump_to(&remotes_file, remote, id)
                            .map(|jumped| jumped.raised)
                    }
                    None => session_focus::focus(&sessions_dir, &session),
                };
                send(UserEvent::Focused {
                    result,
                    from_notification,
                });
            });
        if let Err(error) = spawned {
            tracing::warn!(%error, "cannot start jumping to the session");
        }
    }

    /// Says where the session is when no window was raised (why, once); a notification's
    /// click then opens the dashboard, which lists the sessions.
    fn focused(
        &mut self,
        result: Result<session_focus::Raised, session_focus::FocusError>,
        from_notification: bool,
    ) {
        match &result {
            Ok(raised) => tracing::info!(%raised, "jumped to the session"),
            Err(error) => tracing::info!(code = error.exit_code(), "no window raised"),
        }
        if let Some((summary, body)) = model::focus_notice(&result, self.said_why_not_raised) {
            if matches!(result, Err(session_focus::FocusError::NotAllowed { .. })) {
                self.said_why_not_raised = true;
            }
            if let Some(background) = &self.background {
                background.send(Command::Notice(summary, body));
            }
            if from_notification {
                open_dashboard();
            }
        }
    }

    /// No tray host: on GNOME (no AppIndicator extension) the person is told once, for
    /// good, in a notification and the dashboard, what to turn on and that notifications and
    /// the jump still work; elsewhere the dashboard opens (once a run) instead of an icon.
    fn no_tray_host(&mut self) {
        if self.dashboard_opened_for_no_tray {
            return;
        }
        self.dashboard_opened_for_no_tray = true;
        let data_home = self
            .paths
            .data_dir
            .parent()
            .map(std::path::Path::to_path_buf);
        match tray_host::NoTray::detect(data_home.as_deref()) {
            tray_host::NoTray::Gnome { help } => {
                tracing::warn!("{help}");
                let told = self.paths.told_no_tray();
                if told.exists() {
                    return;
                }
                if let Some(background) = &self.background {
                    background.send(Command::Notice(
                        tray_host::NO_TRAY_ON_GNOME.to_string(),
                        help,
                    ));
                }
                if let Err(error) = companion_platform::fsutil::write_atomic(
                    &told,
                    b"",
                    companion_platform::fsutil::PRIVATE_FILE_MODE,
                ) {
                    tracing::warn!(%error, "cannot keep that the person was told");
                }
                open_dashboard();
            }
            tray_host::NoTray::Other => {
                tracing::warn!("{}", tray_host::NO_TRAY_HELP);
                eprintln!("fabric-tray: {}", tray_host::NO_TRAY_HELP);
                open_dashboard();
            }
        }
    }

    /// Ends the tray: the icon goes, the background thread stops (children of looks in
    /// flight are killed).
    pub fn stop(&mut self) {
        self.surface.close();
        if let Some(background) = self.background.take() {
            background.shutdown();
        }
    }
}

/// Looks for a tray host a few seconds after start (a panel may start after us at login).
fn spawn_tray_host_check(send: EventSink) {
    let _ = std::thread::Builder::new()
        .name("tray-host-check".into())
        .spawn(move || {
            std::thread::sleep(Duration::from_secs(3));
            send(if tray_host::tray_host_present() {
                UserEvent::TrayHost
            } else {
                UserEvent::NoTrayHost
            });
        });
}

fn open_dashboard() {
    match launcher::open_dashboard() {
        Ok(program) => tracing::info!(program = %program.display(), "dashboard started"),
        Err(error) => tracing::warn!(%error, "cannot open the dashboard"),
    }
}
