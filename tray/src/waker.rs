//! One wake-up at a time for the controller: the model asks to decide again at a moment when
//! no file changes (a wait's grace or its rate limit running out, the next minute of a wait the
//! menu counts: [`crate::model::Decision::wake_at`]). A thread sleeps until the latest deadline
//! set and calls back once; setting a new one replaces it, `None` cancels it. It never wakes on
//! its own otherwise.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Default)]
struct State {
    /// The deadline, Unix seconds.
    at: Option<u64>,
    stopping: bool,
}

/// The waker's handle; dropping it ends the thread.
pub struct Waker {
    state: Arc<(Mutex<State>, Condvar)>,
}

impl Waker {
    /// Starts the thread; `wake` runs at each deadline reached.
    pub fn start(wake: impl Fn() + Send + 'static) -> std::io::Result<Waker> {
        let state: Arc<(Mutex<State>, Condvar)> = Arc::default();
        let shared = Arc::clone(&state);
        std::thread::Builder::new()
            .name("waker".into())
            .spawn(move || {
                while wait(&shared) {
                    wake();
                }
            })?;
        Ok(Waker { state })
    }

    /// Wakes at `at` (Unix seconds) instead of any deadline set before; `None`: not at all.
    pub fn set(&self, at: Option<u64>) {
        let (lock, changed) = &*self.state;
        let mut state = lock.lock().unwrap_or_else(|e| e.into_inner());
        if state.at != at {
            state.at = at;
            changed.notify_one();
        }
    }
}

impl Drop for Waker {
    fn drop(&mut self) {
        let (lock, changed) = &*self.state;
        lock.lock().unwrap_or_else(|e| e.into_inner()).stopping = true;
        changed.notify_one();
    }
}

fn now_unix_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Sleeps until the deadline set is reached (true) or the waker stops (false).
fn wait(state: &(Mutex<State>, Condvar)) -> bool {
    let (lock, changed) = state;
    let mut current = lock.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        if current.stopping {
            return false;
        }
        match current.at {
            None => current = changed.wait(current).unwrap_or_else(|e| e.into_inner()),
            Some(at) => {
                let left = at as f64 - now_unix_secs();
                if left <= 0.0 {
                    current.at = None;
                    return true;
                }
                current = changed
                    .wait_timeout(current, Duration::from_secs_f64(left))
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn wakes_once_at_the_deadline_and_a_new_one_replaces_it() {
        let (tx, rx) = mpsc::channel();
        let waker = Waker::start(move || {
            let _ = tx.send(());
        })
        .unwrap();
        let now = now_unix_secs() as u64;
        waker.set(Some(now + 100));
        waker.set(Some(now + 1));
        rx.recv_timeout(Duration::from_secs(5)).expect("woken");
        assert!(
            rx.recv_timeout(Duration::from_millis(1500)).is_err(),
            "once"
        );
        let now = now_unix_secs() as u64;
        waker.set(Some(now + 3));
        waker.set(None);
        assert!(
            rx.recv_timeout(Duration::from_millis(2500)).is_err(),
            "cancelled"
        );
    }
}
