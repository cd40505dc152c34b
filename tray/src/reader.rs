//! The snapshot reader: one thread that gathers what a refresh needs (the tray's snapshot,
//! including whether the person is looking at a session, which may ask tmux, the X server or
//! the Wayland compositor; the settings; Fabric's pid) off the shell's thread, so a slow file
//! system, tmux or desktop never freezes the menu. Requests coalesce: any number of them
//! while a read runs make one more read. Each reading goes to the controller through the
//! shell's event channel; when the desktop must be asked which session is looked at, a
//! reading without that answer goes first (`looked_at_pending`), so the icon's count never
//! waits on the desktop. The remotes' links are kept in step with the settings here too
//! ([`crate::remotes`]), and a change on a remote asks for a reading like a file does.

use std::sync::{Arc, Condvar, Mutex};

use companion_platform::paths::Paths;
use companion_sessions::settings::{self, Settings};

use crate::model::{FabricLine, Snapshot};
use crate::remotes::Remotes;
use crate::{clock, snapshot};

/// One reading of everything a refresh decides from.
#[derive(Debug, Clone)]
pub struct Reading {
    pub snapshot: Snapshot,
    pub settings: Settings,
    /// Fabric's pid while it runs (the background thread watches it).
    pub fabric_pid: Option<u32>,
    /// When it was read (Unix seconds).
    pub now: i64,
    /// The desktop is still being asked which session is looked at: only the icon may be
    /// taken from this reading; the full one follows.
    pub looked_at_pending: bool,
}

#[derive(Default)]
struct State {
    wanted: bool,
    stopping: bool,
}

/// The reader thread's handle; dropping it ends the thread after its current read, and
/// waits (a few seconds at most) for it to end its remotes' links and remove their file.
pub struct Reader {
    state: Arc<(Mutex<State>, Condvar)>,
    ended: std::sync::mpsc::Receiver<()>,
}

/// How long dropping the reader waits for its thread to end.
const END_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

impl Reader {
    /// Starts the thread; `deliver` gets each reading.
    pub fn start(
        paths: Paths,
        deliver: impl Fn(Reading) + Send + 'static,
    ) -> std::io::Result<Reader> {
        let state: Arc<(Mutex<State>, Condvar)> = Arc::default();
        let shared = Arc::clone(&state);
        let woken = Arc::clone(&state);
        let (ended_tx, ended) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("snapshot".into())
            .spawn(move || {
                let mut remotes = Remotes::new(&paths, move || ask(&woken));
                while wait_for_request(&shared) {
                    let (mut first, candidates) = read_unlooked(&paths);
                    remotes.follow(&first.settings.remotes);
                    snapshot::add_remotes(&mut first.snapshot, &remotes.entries());
                    if candidates.is_empty() {
                        deliver(first);
                    } else {
                        deliver(Reading {
                            looked_at_pending: true,
                            ..first.clone()
                        });
                        let mut full = first;
                        full.snapshot.looked_at = snapshot::looked_at(&paths, &candidates);
                        deliver(full);
                    }
                }
                // The links (and their ssh) end, and the remotes' file goes, before we say so.
                drop(remotes);
                let _ = ended_tx.send(());
            })?;
        Ok(Reader { state, ended })
    }

    /// Asks for a fresh reading (coalesced with any already asked for).
    pub fn request(&self) {
        ask(&self.state);
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let (lock, wake) = &*self.state;
        lock.lock().unwrap_or_else(|e| e.into_inner()).stopping = true;
        wake.notify_one();
        let _ = self.ended.recv_timeout(END_WAIT);
    }
}

fn ask(state: &(Mutex<State>, Condvar)) {
    let (lock, wake) = state;
    lock.lock().unwrap_or_else(|e| e.into_inner()).wanted = true;
    wake.notify_one();
}

/// Waits for a request; false when the reader is stopping.
fn wait_for_request(state: &(Mutex<State>, Condvar)) -> bool {
    let (lock, wake) = state;
    let mut current = lock.lock().unwrap_or_else(|e| e.into_inner());
    while !current.wanted && !current.stopping {
        current = wake.wait(current).unwrap_or_else(|e| e.into_inner());
    }
    current.wanted = false;
    !current.stopping
}

/// Reads everything a refresh needs, now.
pub fn read(paths: &Paths) -> Reading {
    let (mut reading, candidates) = read_unlooked(paths);
    reading.snapshot.looked_at = snapshot::looked_at(paths, &candidates);
    reading
}

/// Reads everything but which session is looked at; the sessions to ask the desktop about.
fn read_unlooked(paths: &Paths) -> (Reading, snapshot::Candidates) {
    let now = clock::now_unix();
    let (snapshot, candidates) = snapshot::read_unlooked(paths, now);
    let settings = settings::load(&settings::settings_path(paths));
    let fabric_pid = match snapshot.fabric {
        FabricLine::Running { .. } => companion_sessions::hub::read_fabric_state(&paths.hub_json())
            .hub()
            .map(|hub| hub.pid),
        FabricLine::Down { .. } => None,
    };
    (
        Reading {
            snapshot,
            settings,
            fabric_pid,
            now,
            looked_at_pending: false,
        },
        candidates,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn readings_happen_on_the_readers_thread_and_requests_coalesce() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path();
        let fabric_dir = home.join("share/passioncode-fabric");
        let paths = Paths {
            home: home.to_path_buf(),
            services_dir: fabric_dir.join("services"),
            fabric_dir,
            cache_dir: home.join("cache/fabric-companion"),
            data_dir: home.join("share/fabric-companion"),
            config_dir: home.join("config/fabric-companion"),
        };
        let (tx, rx) = mpsc::channel();
        let reader = Reader::start(paths, move |_reading| {
            let _ = tx.send(std::thread::current().name().map(str::to_string));
        })
        .unwrap();
        reader.request();
        let first = rx.recv_timeout(Duration::from_secs(30)).unwrap();
        assert_eq!(first.as_deref(), Some("snapshot"));
        assert_ne!(
            std::thread::current().name(),
            Some("snapshot"),
            "the caller's thread only asks"
        );
        drop(reader);
        assert!(
            rx.recv_timeout(Duration::from_secs(5)).is_err(),
            "no reading after the reader is dropped"
        );
    }
}
