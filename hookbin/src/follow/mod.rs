//! `fabric-session status --json --follow`: the status document now and again on every change,
//! one JSON document a line (`docs/status-json.md`, "--follow"), for a reader at the other end
//! of a pipe or an ssh connection (the tray's remote sessions).
//!
//! - **Driven by changes**, never by busy polling: on Linux the files `status` reads are
//!   watched through inotify ([`inotify`]) and the sessions' host processes through pidfds
//!   ([`exits`]); a burst is coalesced ([`QUIET`], at most [`MOST_WAIT`]), the status read
//!   again, and a line printed only when the document differs from the last one printed.
//!   Where a watch is refused or incomplete (more than 512 session folders or processes, the
//!   kernel's limits), and on other systems, the status is read again every [`REREAD`].
//! - **A heartbeat** line when nothing was printed for 30 s, so a dead link is noticed.
//! - **Ends (exit 0) when its output closes**: stdout is polled with the watch (Unix), so a
//!   reader gone ends it at once even while idle; a failed write (EPIPE) ends it quietly.
//!   On Windows a closed output is noticed at the next line written (a heartbeat within 30 s).
//! - **Never blocks a hook**: it only reads, the way `status` does, taking no lock.
//!
//! It lives in the binary rather than in `companion-desktop`: the binary is its only user, the
//! binary must not link `notify`, and the tray and the dashboard keep their one watcher
//! (`companion_desktop::file_watch`). The list of what is watched is that crate's (`watched`).

#[cfg(target_os = "linux")]
mod exits;
#[cfg(target_os = "linux")]
mod inotify;

use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use companion_platform::paths::Paths;
use companion_platform::{clock, env_vars};
use companion_sessions::status::{self, STATUS_SCHEMA, Status};

/// A burst of changes is over after this long without another.
const QUIET: Duration = Duration::from_millis(80);
/// The longest a burst delays the read after its first change.
const MOST_WAIT: Duration = Duration::from_millis(400);
/// The read on a timer, where changes cannot all be watched.
const REREAD: Duration = Duration::from_secs(2);
/// A heartbeat after this long without a line.
const HEARTBEAT: Duration = Duration::from_secs(30);
/// The shortest heartbeat the (test-only) variable may ask for.
const SHORTEST_HEARTBEAT: Duration = Duration::from_millis(100);

/// Runs until the output closes; the exit status.
pub fn run(paths: &Paths, cwd: Option<&Path>) -> anyhow::Result<u8> {
    let heartbeat = heartbeat_interval();
    let mut changes = Changes::start(paths);
    let mut lines = Lines::default();
    if !lines.document(&status::collect(paths, cwd), &mut changes)? {
        return Ok(0);
    }
    let mut last_read = Instant::now();
    let mut burst: Option<(Instant, Instant)> = None;
    loop {
        let timer = changes.incomplete().then(|| last_read + REREAD);
        let burst_due = burst.map(|(first, last)| (last + QUIET).min(first + MOST_WAIT));
        let due = [Some(lines.last + heartbeat), timer, burst_due]
            .into_iter()
            .flatten()
            .min()
            .expect("the heartbeat is always due");
        match changes.wait(due.saturating_duration_since(Instant::now())) {
            Woke::Closed => return Ok(0),
            Woke::Changed => {
                let now = Instant::now();
                burst = Some((burst.map_or(now, |(first, _)| first), now));
            }
            Woke::Nothing => {}
        }
        let now = Instant::now();
        let burst_over =
            burst.is_some_and(|(first, last)| now >= last + QUIET || now >= first + MOST_WAIT);
        let timer_due = changes.incomplete() && now >= last_read + REREAD;
        if burst_over || timer_due {
            burst = None;
            last_read = now;
            if !lines.document(&status::collect(paths, cwd), &mut changes)? {
                return Ok(0);
            }
        }
        if Instant::now() >= lines.last + heartbeat && !lines.heartbeat()? {
            return Ok(0);
        }
    }
}

/// The heartbeat's interval: 30 s, or (tests) `$FABRIC_SESSION_FOLLOW_HEARTBEAT_MS`, clamped.
fn heartbeat_interval() -> Duration {
    std::env::var(env_vars::FABRIC_SESSION_FOLLOW_HEARTBEAT_MS)
        .ok()
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .map_or(HEARTBEAT, |d| d.clamp(SHORTEST_HEARTBEAT, HEARTBEAT))
}

/// The lines printed: the last document (compared before printing another) and when the
/// last line went out.
struct Lines {
    document: String,
    last: Instant,
}

impl Default for Lines {
    fn default() -> Self {
        Lines {
            document: String::new(),
            last: Instant::now(),
        }
    }
}

impl Lines {
    /// Prints the document unless it is the last one printed; tells `changes` which host
    /// processes to watch. `false` when the output is closed.
    fn document(&mut self, snapshot: &Status, changes: &mut Changes) -> anyhow::Result<bool> {
        changes.sessions(snapshot);
        // Compact: one line, no newline inside (a newline in a string is escaped).
        let text = serde_json::to_string(snapshot)?;
        if text == self.document {
            return Ok(true);
        }
        let open = self.print(&text)?;
        self.document = text;
        Ok(open)
    }

    /// `{"schema":"fabric-session-status/1","heartbeat":"<now>"}`.
    fn heartbeat(&mut self) -> anyhow::Result<bool> {
        let line = serde_json::json!({"schema": STATUS_SCHEMA, "heartbeat": clock::now_rfc3339()});
        self.print(&line.to_string())
    }

    /// One line, flushed. `false` when nobody reads it any more (EPIPE).
    fn print(&mut self, text: &str) -> anyhow::Result<bool> {
        self.last = Instant::now();
        let mut line = String::with_capacity(text.len() + 1);
        line.push_str(text);
        line.push('\n');
        let mut out = io::stdout().lock();
        match out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(false),
            Err(err) => Err(anyhow::Error::new(err).context("writing the status")),
        }
    }
}

/// What ended a wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Only the watch (Linux) reports a change, only poll (Unix) a closed output.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
enum Woke {
    /// The output is closed: the reader is gone.
    Closed,
    /// Something `status` reads changed.
    Changed,
    /// The time given ran out (or a signal, or an event that did not count).
    Nothing,
}

/// What wakes the loop: the watch (Linux), the output's end (Unix), the time.
struct Changes {
    #[cfg(target_os = "linux")]
    watcher: Option<inotify::Watcher>,
    #[cfg(target_os = "linux")]
    exits: exits::Exits,
}

impl Changes {
    #[cfg(target_os = "linux")]
    fn start(paths: &Paths) -> Changes {
        let folders = companion_desktop::watched::watched_folders(paths);
        Changes {
            watcher: inotify::Watcher::new(folders).ok(),
            exits: exits::Exits::default(),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn start(_paths: &Paths) -> Changes {
        Changes {}
    }

    /// Some change may go unseen: read again on a timer.
    fn incomplete(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.watcher
                .as_ref()
                .is_none_or(inotify::Watcher::incomplete)
                || self.exits.incomplete()
        }
        #[cfg(not(target_os = "linux"))]
        true
    }

    /// The sessions just listed: their host processes are watched for their end.
    fn sessions(&mut self, snapshot: &Status) {
        #[cfg(target_os = "linux")]
        {
            let pids: Vec<u32> = snapshot.sessions.iter().map(|s| s.host_pid).collect();
            self.exits.track(&pids);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = snapshot;
    }

    /// Waits up to `timeout` for a change or the output's end.
    #[cfg(unix)]
    fn wait(&mut self, timeout: Duration) -> Woke {
        let mut fds = vec![libc::pollfd {
            fd: libc::STDOUT_FILENO,
            // Nothing asked: POLLERR and POLLHUP (a reader gone) are always reported, and a
            // regular file or a terminal never wakes us.
            events: 0,
            revents: 0,
        }];
        #[cfg(target_os = "linux")]
        let exits = self.exits.fds();
        #[cfg(target_os = "linux")]
        {
            if let Some(watcher) = &self.watcher {
                fds.push(libc::pollfd {
                    fd: watcher.fd(),
                    events: libc::POLLIN,
                    revents: 0,
                });
            }
            fds.extend(exits.iter().map(|&(_, fd)| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            }));
        }
        // Rounded up, so a wait never ends just before its time and spins.
        let ms = timeout.as_micros().div_ceil(1000);
        let ms = libc::c_int::try_from(ms).unwrap_or(libc::c_int::MAX);
        // SAFETY: `fds` is a valid array of its length.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if ready <= 0 {
            return Woke::Nothing;
        }
        if fds[0].revents & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
            return Woke::Closed;
        }
        #[cfg(target_os = "linux")]
        {
            let mut changed = false;
            let mut next = 1;
            if let Some(watcher) = &mut self.watcher {
                if fds[next].revents != 0 {
                    changed |= watcher.read();
                }
                next += 1;
            }
            for (i, &(pid, _)) in exits.iter().enumerate() {
                if fds[next + i].revents != 0 {
                    self.exits.ended(pid);
                    changed = true;
                }
            }
            if changed {
                return Woke::Changed;
            }
        }
        Woke::Nothing
    }

    /// Windows: the time only (a closed output is noticed when a line is written).
    #[cfg(not(unix))]
    fn wait(&mut self, timeout: Duration) -> Woke {
        std::thread::sleep(timeout);
        Woke::Nothing
    }
}
