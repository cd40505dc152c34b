//! The tray's registration against each way a StatusNotifierWatcher writes items (issue 28):
//! `:1.28/StatusNotifierItem` (KDE), `:1.28@/StatusNotifierItem` (AppIndicator 59 to 65) and
//! the bare `/StatusNotifierItem` (AppIndicator 66, GNOME 50), in its list and in its
//! `StatusNotifierItemUnregistered`. A watcher of the test's own writes the chosen form and
//! counts the registrations: the item registers once and stays (no needless registration
//! again), shrugs off another item's `Unregistered` in the same form, and registers again
//! when its own goes.
//!
//! Each test runs the real `fabric-tray` on a private session bus (and Xvfb). Linux only.
#![cfg(target_os = "linux")]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use zbus::object_server::SignalEmitter;

mod desktop;

use desktop::*;

/// How the watcher writes an item registered by path from connection `:1.x`.
#[derive(Debug, Clone, Copy)]
enum Form {
    /// `:1.x/StatusNotifierItem`.
    Kde,
    /// `:1.x@/StatusNotifierItem`.
    AppIndicator59,
    /// `/StatusNotifierItem`.
    AppIndicator66,
}

impl Form {
    fn write(self, sender: &str, path: &str) -> String {
        match self {
            Form::Kde => format!("{sender}{path}"),
            Form::AppIndicator59 => format!("{sender}@{path}"),
            Form::AppIndicator66 => path.to_string(),
        }
    }
}

#[derive(Default)]
struct State {
    /// Every registration's sender, in order.
    registrations: Vec<String>,
    /// The list as the watcher shows it.
    items: Vec<String>,
}

struct Watcher {
    form: Form,
    state: Arc<Mutex<State>>,
}

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Watcher {
    async fn register_status_notifier_item(
        &self,
        service: String,
        #[zbus(header)] header: zbus::message::Header<'_>,
    ) {
        let sender = header.sender().map(ToString::to_string).unwrap_or_default();
        let entry = self.form.write(&sender, &service);
        let mut state = self.state.lock().unwrap();
        state.registrations.push(sender);
        if !state.items.contains(&entry) {
            state.items.push(entry);
        }
    }

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        self.state.lock().unwrap().items.clone()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        false
    }

    #[zbus(signal)]
    async fn status_notifier_item_unregistered(
        emitter: &SignalEmitter<'_>,
        service: &str,
    ) -> zbus::Result<()>;
}

/// The watcher on its own thread; the returned sender emits `Unregistered` with its string.
fn start_watcher(
    address: &str,
    form: Form,
) -> (Arc<Mutex<State>>, std::sync::mpsc::Sender<String>) {
    let state: Arc<Mutex<State>> = Arc::default();
    let theirs = Arc::clone(&state);
    let address = address.to_string();
    let (ready_tx, ready) = std::sync::mpsc::channel();
    let (emit, emits) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let bus = zbus::connection::Builder::address(address.as_str())
                .serve_at(
                    "/StatusNotifierWatcher",
                    Watcher {
                        form,
                        state: theirs,
                    },
                )
                .name("org.kde.StatusNotifierWatcher")
                .build()
                .await
                .unwrap();
            ready_tx.send(()).unwrap();
            let emitter = SignalEmitter::new(&bus, "/StatusNotifierWatcher").unwrap();
            loop {
                match emits.try_recv() {
                    Ok(service) => {
                        Watcher::status_notifier_item_unregistered(&emitter, &service)
                            .await
                            .unwrap();
                    }
                    Err(std::sync::mpsc::TryRecvError::Empty) => {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => break,
                }
            }
        })
    });
    ready.recv_timeout(WAIT).expect("the watcher on the bus");
    (state, emit)
}

fn registrations(state: &Mutex<State>) -> usize {
    state.lock().unwrap().registrations.len()
}

/// The count stays `count` for `span`.
fn stays(state: &Mutex<State>, count: usize, span: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < span {
        if registrations(state) != count {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    true
}

fn registers_once_and_again_only_when_its_own_goes(test: &str, form: Form) {
    if !desktop_available(test) {
        return;
    }
    let mut desktop = Desktop::start_bare(test);
    let (state, emit) = start_watcher(&desktop.bus, form);
    std::fs::create_dir_all(desktop.config_dir()).unwrap();
    let mut tray = desktop.command(TRAY);
    tray.env("FABRIC_COMPANION_BIN", "/bin/true")
        .env("FABRIC_SESSION_BIN", session_binary())
        .env("FABRIC_TRAY_LOG", "info,fabric_tray=debug");
    desktop.spawn_logged("fabric-tray", tray);
    let log = |desktop: &Desktop| {
        std::fs::read_to_string(desktop.shots.join("fabric-tray.log")).unwrap_or_default()
    };
    wait_until("the first registration", WAIT, || {
        (registrations(&state) >= 1).then_some(())
    });
    // Registered once and left alone: the check after registering (1.5 s) and any retry
    // (from 0.5 s) would have come within 8 s.
    assert!(
        stays(&state, 1, Duration::from_secs(8)),
        "{form:?}: registered {} times; log:\n{}",
        registrations(&state),
        log(&desktop)
    );
    let ours = state.lock().unwrap().items[0].clone();
    // Another item of the same form goes: ours is still listed, no registration again.
    let other = form.write(":1.9999", "/StatusNotifierItem");
    let other = if other == ours {
        other
    } else {
        form.write(":1.9999", "/org/ayatana/NotificationItem/other")
    };
    emit.send(other).unwrap();
    assert!(
        stays(&state, 1, Duration::from_secs(4)),
        "{form:?}: another item's Unregistered made the tray register again; log:\n{}",
        log(&desktop)
    );
    // Ours goes: the tray registers again.
    state.lock().unwrap().items.clear();
    emit.send(ours).unwrap();
    wait_until("the registration again", Duration::from_secs(20), || {
        (registrations(&state) == 2).then_some(())
    });
    assert!(
        stays(&state, 2, Duration::from_secs(4)),
        "{form:?}: registered {} times after its own went; log:\n{}",
        registrations(&state),
        log(&desktop)
    );
}

#[test]
fn a_kde_watcher_keeps_the_item_registered_once() {
    registers_once_and_again_only_when_its_own_goes(
        "a_kde_watcher_keeps_the_item_registered_once",
        Form::Kde,
    );
}

#[test]
fn an_appindicator_59_watcher_keeps_the_item_registered_once() {
    registers_once_and_again_only_when_its_own_goes(
        "an_appindicator_59_watcher_keeps_the_item_registered_once",
        Form::AppIndicator59,
    );
}

#[test]
fn an_appindicator_66_watcher_keeps_the_item_registered_once() {
    registers_once_and_again_only_when_its_own_goes(
        "an_appindicator_66_watcher_keeps_the_item_registered_once",
        Form::AppIndicator66,
    );
}
