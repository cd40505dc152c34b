//! The platform shell: the tao event loop, the tray icon and its menu (tray-icon + muda), and
//! the wiring of file events, the background thread and menu actions to the pure model.
//!
//! Everything that decides lives in [`crate::model`]; this file only applies a
//! [`crate::model::TrayView`]: the icon is replaced only when its state changes, the
//! menu is rebuilt only when its lines change.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use companion_core::host::Host;
use companion_core::paths::Paths;
use companion_core::programs::{self, Program, Search};
use companion_core::settings;
use companion_core::stable_binary::{self, CopyOutcome};
use companion_core::tray_lock;
use companion_core::{file_watch, watched};
use tao::event::{Event, StartCause};
use tao::event_loop::{ControlFlow, EventLoopBuilder, EventLoopProxy};
use tao::platform::run_return::EventLoopExtRunReturn;
use tray_icon::menu::{IsMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem, Submenu};
use tray_icon::{TrayIcon, TrayIconBuilder};

use crate::background::{self, Background, Command};
use crate::model::{self, Action, Choice, MenuLine, Model, TrayView};
use crate::{clock, icon, launcher, offers, snapshot, tray_host};

/// Fabric Companion's tray: unread counts, sessions, hook status and notifications.
#[derive(Debug, Parser)]
#[command(name = "fabric-tray", version, about)]
struct Cli {
    /// Write the tray and app icons as PNG files into DIR, then exit.
    #[arg(long, value_name = "DIR", hide = true)]
    render_icons: Option<PathBuf>,
}

/// Events the loop receives from other threads.
#[derive(Debug, Clone)]
pub enum UserEvent {
    /// Files changed, or the background thread wants a fresh snapshot.
    Refresh,
    /// A menu item was chosen.
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
}

/// The tray's entry point.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FABRIC_TRAY_LOG").unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new("info,rmcp=warn,notify=warn")
            }),
        )
        .init();
    // A special file where one of ours or a host's should be is read as absent: one line each.
    companion_core::fsutil::report_skipped_with(|name, special| {
        tracing::warn!("{name} is {special}; read as absent");
    });
    if let Some(dir) = cli.render_icons {
        return match icon::render_all(&dir) {
            Ok(files) => {
                for file in files {
                    println!("{}", file.display());
                }
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("fabric-tray: cannot write icons: {error}");
                ExitCode::FAILURE
            }
        };
    }
    let Some(paths) = Paths::from_env() else {
        eprintln!("fabric-tray: no home folder is known");
        return ExitCode::FAILURE;
    };
    let lock_path = tray_lock::lock_path(&paths);
    let _lock = match tray_lock::acquire(&lock_path) {
        Ok(lock) => lock,
        Err(tray_lock::LockError::Held(path)) => {
            eprintln!(
                "fabric-tray: another fabric-tray is already running (lock {}); exiting",
                path.display()
            );
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("fabric-tray: {error}");
            return ExitCode::FAILURE;
        }
    };
    install_stable_binary(&paths);
    match run_loop(paths) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("fabric-tray: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Copies `fabric-session` to the stable path hooks point at (first start and upgrades):
/// the one shipped beside the tray (or `$FABRIC_SESSION_BIN`), never one from `PATH`. The
/// package's tray makes no copy: its hooks run the package's own program.
fn install_stable_binary(paths: &Paths) {
    if let Some(packaged) = stable_binary::packaged_program() {
        tracing::info!(program = %packaged.display(), "installed from the package: no stable copy");
        return;
    }
    let source = match programs::find(Program::Session, Search::BesideOnly) {
        Ok(source) => source,
        Err(error) => {
            tracing::info!(%error, "the stable copy of fabric-session is left as is");
            return;
        }
    };
    let stable = paths.stable_binary();
    match stable_binary::ensure_copy(&source, &stable) {
        Ok(CopyOutcome::Unchanged) => {}
        Ok(outcome) => {
            tracing::info!(?outcome, stable = %stable.display(), "fabric-session copied")
        }
        Err(error) => {
            tracing::warn!(%error, stable = %stable.display(), "cannot copy fabric-session")
        }
    }
}

struct State {
    paths: Paths,
    model: Model,
    tray: Option<TrayIcon>,
    shown: Option<TrayView>,
    background: Option<Background>,
    interval: Duration,
    dashboard_opened_for_no_tray: bool,
    /// Hosts whose first-run offer was notified in this run.
    offers_notified: BTreeSet<Host>,
    /// Why a window cannot be raised here was said once already.
    said_why_not_raised: bool,
    proxy: EventLoopProxy<UserEvent>,
}

fn run_loop(paths: Paths) -> anyhow::Result<()> {
    let mut event_loop = EventLoopBuilder::<UserEvent>::with_user_event().build();
    #[cfg(target_os = "macos")]
    {
        use tao::platform::macos::{ActivationPolicy, EventLoopExtMacOS};
        event_loop.set_activation_policy(ActivationPolicy::Accessory);
    }
    let proxy = event_loop.create_proxy();

    // Our own folders exist from the start, so they can be watched.
    for dir in [&paths.cache_dir, &paths.config_dir] {
        let _ = companion_core::fsutil::create_private_dir(dir);
    }
    let refresh = proxy.clone();
    file_watch::spawn(watched::watched_folders(&paths), move |_changes| {
        let _ = refresh.send_event(UserEvent::Refresh);
    })?;

    let menu_proxy = proxy.clone();
    MenuEvent::set_event_handler(Some(move |event: MenuEvent| {
        let _ = menu_proxy.send_event(UserEvent::Menu(event.id.0));
    }));

    let interval = Duration::from_secs(
        settings::load(&settings::settings_path(&paths)).effective_interval_secs(),
    );
    let bg_proxy = proxy.clone();
    let background = Background::start(paths.clone(), interval, move |event| {
        let _ = bg_proxy.send_event(match event {
            background::Event::Refresh => UserEvent::Refresh,
            background::Event::Focus(session) => UserEvent::Focus(session),
            background::Event::OpenDashboard => UserEvent::OpenDashboard,
        });
    })?;

    if cfg!(target_os = "linux") {
        spawn_tray_host_check(proxy.clone());
    }

    let mut state = State {
        paths,
        model: Model::default(),
        tray: None,
        shown: None,
        background: Some(background),
        interval,
        dashboard_opened_for_no_tray: false,
        offers_notified: BTreeSet::new(),
        said_why_not_raised: false,
        proxy: proxy.clone(),
    };
    event_loop.run_return(move |event, _target, control_flow| {
        *control_flow = ControlFlow::Wait;
        match event {
            Event::NewEvents(StartCause::Init) => {
                state.refresh();
            }
            Event::UserEvent(UserEvent::Refresh) => state.refresh(),
            Event::UserEvent(UserEvent::Focus(session)) => state.focus(session, true),
            Event::UserEvent(UserEvent::OpenDashboard) => open_dashboard(),
            Event::UserEvent(UserEvent::Focused {
                result,
                from_notification,
            }) => state.focused(result, from_notification),
            Event::UserEvent(UserEvent::NoTrayHost) => state.no_tray_host(),
            Event::UserEvent(UserEvent::Menu(id)) => match Choice::from_id(&id) {
                Some(Choice::Action(action)) if state.act(action) => {
                    *control_flow = ControlFlow::Exit;
                }
                Some(Choice::Action(_)) => {}
                Some(Choice::Focus(session)) => state.focus(session, false),
                None => {}
            },
            Event::LoopDestroyed => state.stop(),
            _ => {}
        }
    });
    Ok(())
}

/// Looks for a tray host a few seconds after start (a panel may start after us at login).
fn spawn_tray_host_check(proxy: EventLoopProxy<UserEvent>) {
    let _ = std::thread::Builder::new()
        .name("tray-host-check".into())
        .spawn(move || {
            std::thread::sleep(Duration::from_secs(3));
            if !tray_host::tray_host_present() {
                let _ = proxy.send_event(UserEvent::NoTrayHost);
            }
        });
}

fn open_dashboard() {
    match launcher::open_dashboard() {
        Ok(program) => tracing::info!(program = %program.display(), "dashboard started"),
        Err(error) => tracing::warn!(%error, "cannot open the dashboard"),
    }
}

impl State {
    /// Takes a snapshot, decides, and applies the view and the notifications.
    fn refresh(&mut self) {
        let now = clock::now_unix();
        let snap = snapshot::read(&self.paths, now);
        let decision = model::decide(&self.model, &snap, now.max(0) as u64);
        self.model = decision.model;
        let settings = settings::load(&settings::settings_path(&self.paths));
        let interval = Duration::from_secs(settings.effective_interval_secs());
        // The first-run offer: menu items while it holds, one notification per host per run.
        let dismissed = settings.dismissed_hook_offers.iter().copied().collect();
        let offers = offers::decide_offers(&snap, &dismissed, &self.offers_notified);
        self.offers_notified = offers.notified;
        let mut view = decision.view;
        view.menu = offers::with_offers(view.menu, &offers.menu);
        if let Some(background) = &self.background {
            if interval != self.interval {
                self.interval = interval;
                background.send(Command::Interval(interval));
            }
            background.send(Command::Watch(model::watch_set(&snap)));
            let fabric_pid = match snap.fabric {
                model::FabricLine::Running { .. } => {
                    companion_core::hub::read_fabric_state(&self.paths.hub_json())
                        .hub()
                        .map(|hub| hub.pid)
                }
                model::FabricLine::Down { .. } => None,
            };
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
        self.apply(view);
    }

    fn apply(&mut self, view: TrayView) {
        let previous = self.shown.take();
        let icon_changed = previous.as_ref().map(|v| &v.icon) != Some(&view.icon);
        let menu_changed = previous.as_ref().map(|v| &v.menu) != Some(&view.menu);
        match &self.tray {
            None => match build_tray(&view) {
                Ok(tray) => self.tray = Some(tray),
                Err(error) => tracing::error!(%error, "cannot create the tray icon"),
            },
            Some(tray) => {
                if icon_changed {
                    tracing::debug!(icon = ?view.icon, "icon changed");
                    #[cfg(target_os = "macos")]
                    let result = tray.set_icon_with_as_template(Some(tray_icon_of(&view)), true);
                    #[cfg(not(target_os = "macos"))]
                    let result = tray.set_icon(Some(tray_icon_of(&view)));
                    if let Err(error) = result {
                        tracing::warn!(%error, "cannot update the tray icon");
                    }
                }
                if menu_changed {
                    tray.set_menu(Some(Box::new(build_menu(&view.menu))));
                }
                #[cfg(target_os = "macos")]
                if previous.as_ref().map(|v| &v.title) != Some(&view.title) {
                    tray.set_title(view.title.as_deref());
                }
            }
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
        let proxy = self.proxy.clone();
        let spawned = std::thread::Builder::new()
            .name("focus".into())
            .spawn(move || {
                let result = session_focus::focus(&sessions_dir, &session);
                let _ = proxy.send_event(UserEvent::Focused {
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

    fn no_tray_host(&mut self) {
        if self.dashboard_opened_for_no_tray {
            return;
        }
        self.dashboard_opened_for_no_tray = true;
        tracing::warn!("{}", tray_host::NO_TRAY_HELP);
        eprintln!("fabric-tray: {}", tray_host::NO_TRAY_HELP);
        open_dashboard();
    }

    fn stop(&mut self) {
        self.tray = None;
        if let Some(background) = self.background.take() {
            background.shutdown();
        }
    }
}

fn tray_icon_of(view: &TrayView) -> tray_icon::Icon {
    let img = icon::render(&view.icon, icon::TRAY_SIZE);
    #[cfg(target_os = "macos")]
    let img = icon::template(&img);
    // The size and buffer always agree, so this cannot fail; fall back to an empty icon.
    tray_icon::Icon::from_rgba(img.pixels, img.width, img.height).unwrap_or_else(|_| {
        tray_icon::Icon::from_rgba(vec![0; 4], 1, 1).expect("a 1×1 icon is valid")
    })
}

fn build_tray(view: &TrayView) -> tray_icon::Result<TrayIcon> {
    let builder = TrayIconBuilder::new()
        .with_id("fabric-tray")
        .with_icon(tray_icon_of(view))
        .with_tooltip("Fabric Companion")
        .with_menu(Box::new(build_menu(&view.menu)))
        // Left-click shows the same menu everywhere (GTK trays do so anyway): no surprise.
        .with_menu_on_left_click(true);
    #[cfg(target_os = "macos")]
    let builder = builder
        .with_icon_as_template(true)
        .with_title(view.title.clone().unwrap_or_default());
    builder.build()
}

fn menu_items(lines: &[MenuLine]) -> Vec<Box<dyn IsMenuItem>> {
    lines
        .iter()
        .map(|line| -> Box<dyn IsMenuItem> {
            match line {
                MenuLine::Info(text) => Box::new(MenuItem::new(text, false, None)),
                MenuLine::Session { label, session } => Box::new(MenuItem::with_id(
                    Choice::Focus(session.clone()).id(),
                    label,
                    true,
                    None,
                )),
                MenuLine::Separator => Box::new(PredefinedMenuItem::separator()),
                MenuLine::Item {
                    label,
                    action,
                    enabled,
                } => Box::new(MenuItem::with_id(action.id(), label, *enabled, None)),
                MenuLine::Submenu { label, items } => {
                    let submenu = Submenu::new(label, true);
                    for item in menu_items(items) {
                        let _ = submenu.append(item.as_ref());
                    }
                    Box::new(submenu)
                }
            }
        })
        .collect()
}

fn build_menu(lines: &[MenuLine]) -> Menu {
    let menu = Menu::new();
    for item in menu_items(lines) {
        let _ = menu.append(item.as_ref());
    }
    menu
}
