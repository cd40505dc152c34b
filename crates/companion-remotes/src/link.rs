//! One remote's link, kept up on a thread of its own: the fixed follow command run (the
//! person's `ssh`, `docker exec`, …), its stdout read line by line (each line bounded, read on
//! a second thread into a channel of two, so a flood only fills a pipe), each line read as
//! untrusted ([`crate::stream`]) and put on the [`Board`].
//!
//! The link restarts the command, after a backoff that doubles from one second to a minute,
//! when the stream ends, sends a line it must not (garbage, another schema, a line too long),
//! floods (more than [`LinkSettings::flood_lines`] lines in ten seconds), or stays silent
//! past [`LinkSettings::silence`] (the other end sends a heartbeat at least every 30 s). Each
//! restart kills the command's whole process group and reaps it. Why it went down is read
//! from the command's exit and the end of its stderr (a host key not known, a password
//! wanted, no `fabric-session` there, or the transport's own words).
//!
//! Stopping: dropping the [`Link`] sends `Stop` through the same channel; the thread kills
//! the command and ends.

use std::io::{self, BufRead, BufReader, Read};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use companion_platform::process_group::{self, Group};

use crate::board::{Board, Down};
use crate::remote::{Remote, RemoteCommand};
use crate::stream::{self, Line, MAX_LINE_BYTES};

/// The environment variable a test bench shortens the silence with (seconds).
pub const SILENCE_VAR: &str = "FABRIC_REMOTE_SILENCE_SECS";
/// How much of the end of the command's stderr is kept to tell why it ended.
const STDERR_KEPT: usize = 2048;
const FLOOD_WINDOW: Duration = Duration::from_secs(10);

/// How a link behaves.
#[derive(Debug, Clone)]
pub struct LinkSettings {
    /// Nothing read for this long: the link is dead (a heartbeat comes every 30 s).
    pub silence: Duration,
    pub backoff_first: Duration,
    pub backoff_max: Duration,
    /// More lines than this in ten seconds is a flood.
    pub flood_lines: usize,
}

impl LinkSettings {
    /// The settings, with the silence from [`SILENCE_VAR`] when a test bench sets it.
    pub fn from_env() -> LinkSettings {
        let silence = std::env::var(SILENCE_VAR)
            .ok()
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|s| (1..=3600).contains(s))
            .unwrap_or(45);
        LinkSettings {
            silence: Duration::from_secs(silence),
            backoff_first: Duration::from_secs(1),
            backoff_max: Duration::from_secs(60),
            flood_lines: 200,
        }
    }
}

enum Event {
    Stop,
    Line { generation: u64, bytes: Vec<u8> },
    TooLong { generation: u64 },
    End { generation: u64 },
}

/// A running link; dropping it stops the link.
pub struct Link {
    events: SyncSender<Event>,
    thread: Option<JoinHandle<()>>,
}

impl Link {
    /// Starts keeping `remote`'s link up, its findings on `board`.
    pub fn start(remote: Remote, board: Board, settings: LinkSettings) -> io::Result<Link> {
        let (events, inbox) = mpsc::sync_channel(2);
        let sender = events.clone();
        board.add(&remote);
        let thread = std::thread::Builder::new()
            .name(format!("remote {}", remote.label()))
            .spawn(move || run(&remote, &board, &settings, &inbox, &sender))?;
        Ok(Link {
            events,
            thread: Some(thread),
        })
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        // A full channel is drained by the thread, so this send always arrives.
        let _ = self.events.send(Event::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// How one connection ended.
enum Ended {
    Stopped,
    Stream,
    Silent,
    Refused(String),
}

fn run(
    remote: &Remote,
    board: &Board,
    settings: &LinkSettings,
    inbox: &Receiver<Event>,
    sender: &SyncSender<Event>,
) {
    let mut backoff = settings.backoff_first;
    let mut generation = 0;
    loop {
        generation += 1;
        let started = Instant::now();
        let (ended, why) = match connect(remote, sender, generation) {
            Ok(mut connection) => {
                let ended = read(remote, board, settings, inbox, generation, &mut connection);
                let status = connection.end();
                let stderr = connection.stderr_tail();
                let why = match &ended {
                    Ended::Stopped => return,
                    Ended::Stream => why_ended(remote, status, &stderr),
                    Ended::Silent => Down::Broken {
                        what: format!("sent nothing for {} s", settings.silence.as_secs()),
                    },
                    Ended::Refused(what) => Down::Broken { what: what.clone() },
                };
                (ended, why)
            }
            Err(err) => (
                Ended::Stream,
                Down::Unreachable {
                    detail: stream::clean(&format!("cannot run its command: {err}")),
                },
            ),
        };
        tracing::info!(remote = remote.spec(), why = %why.describe(), "remote link down");
        board.down(remote, why);
        if matches!(ended, Ended::Stream | Ended::Silent | Ended::Refused(_))
            && started.elapsed() > Duration::from_secs(60)
        {
            backoff = settings.backoff_first;
        }
        if !pause(inbox, backoff) {
            return;
        }
        backoff = (backoff * 2).min(settings.backoff_max);
    }
}

/// Waits `backoff`, dropping what a gone connection still sends; `false` on Stop.
fn pause(inbox: &Receiver<Event>, backoff: Duration) -> bool {
    let until = Instant::now() + backoff;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return true;
        }
        match inbox.recv_timeout(left) {
            Ok(Event::Stop) | Err(RecvTimeoutError::Disconnected) => return false,
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout) => return true,
        }
    }
}

/// Reads one connection's lines until it ends.
fn read(
    remote: &Remote,
    board: &Board,
    settings: &LinkSettings,
    inbox: &Receiver<Event>,
    generation: u64,
    _connection: &mut Connection,
) -> Ended {
    let mut recent: std::collections::VecDeque<Instant> = Default::default();
    loop {
        let event = match inbox.recv_timeout(settings.silence) {
            Ok(event) => event,
            Err(RecvTimeoutError::Timeout) => return Ended::Silent,
            Err(RecvTimeoutError::Disconnected) => return Ended::Stopped,
        };
        match event {
            Event::Stop => return Ended::Stopped,
            Event::Line {
                generation: g,
                bytes,
            } if g == generation => {
                let now = Instant::now();
                recent.push_back(now);
                while recent
                    .front()
                    .is_some_and(|t| now.duration_since(*t) > FLOOD_WINDOW)
                {
                    recent.pop_front();
                }
                if recent.len() > settings.flood_lines {
                    return Ended::Refused(format!(
                        "sent more than {} lines in {} s",
                        settings.flood_lines,
                        FLOOD_WINDOW.as_secs()
                    ));
                }
                match stream::parse_line(&bytes, companion_platform::clock::now_millis()) {
                    Ok(Line::Snapshot(state)) => {
                        board.up(remote);
                        board.state(remote, state);
                    }
                    Ok(Line::Heartbeat) => board.up(remote),
                    Err(err) => return Ended::Refused(err.to_string()),
                }
            }
            Event::TooLong { generation: g } if g == generation => {
                return Ended::Refused(stream::StreamError::TooLong.to_string());
            }
            Event::End { generation: g } if g == generation => return Ended::Stream,
            _ => {}
        }
    }
}

/// One run of the follow command.
struct Connection {
    child: Child,
    group: Group,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_thread: Option<JoinHandle<()>>,
}

fn connect(remote: &Remote, sender: &SyncSender<Event>, generation: u64) -> io::Result<Connection> {
    let mut command = remote.command(&RemoteCommand::Follow);
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    process_group::prepare(&mut command);
    let mut child = command.spawn()?;
    #[cfg(windows)]
    let group = {
        use std::os::windows::io::AsRawHandle;
        Group::of(child.id(), child.as_raw_handle())
    };
    #[cfg(not(windows))]
    let group = Group::of(child.id());
    let stdout = child.stdout.take().expect("piped");
    let stderr_pipe = child.stderr.take().expect("piped");
    let lines = sender.clone();
    std::thread::Builder::new()
        .name("remote stdout".into())
        .spawn(move || read_lines(stdout, &lines, generation))?;
    let stderr: Arc<Mutex<Vec<u8>>> = Arc::default();
    let kept = Arc::clone(&stderr);
    let stderr_thread = std::thread::Builder::new()
        .name("remote stderr".into())
        .spawn(move || keep_tail(stderr_pipe, &kept))?;
    Ok(Connection {
        child,
        group,
        stderr,
        stderr_thread: Some(stderr_thread),
    })
}

impl Connection {
    /// Kills the command's group (whatever it started too) and reaps it.
    fn end(&mut self) -> Option<ExitStatus> {
        let exited = self.child.try_wait().ok().flatten();
        if exited.is_none() {
            self.group.kill();
        }
        let status = exited.or_else(|| self.child.wait().ok());
        if let Some(thread) = self.stderr_thread.take() {
            let _ = thread.join();
        }
        status
    }

    fn stderr_tail(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap_or_else(|e| e.into_inner())).into_owned()
    }
}

/// Sends each line (at most [`MAX_LINE_BYTES`]) of `stdout`; a longer one ends the reading.
fn read_lines(stdout: impl Read, lines: &SyncSender<Event>, generation: u64) {
    let mut reader = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::new();
    loop {
        let (done, used) = match reader.fill_buf() {
            Ok([]) | Err(_) => {
                let _ = lines.send(Event::End { generation });
                return;
            }
            Ok(buf) => match buf.iter().position(|&b| b == b'\n') {
                Some(at) => {
                    line.extend_from_slice(&buf[..at]);
                    (true, at + 1)
                }
                None => {
                    line.extend_from_slice(buf);
                    (false, buf.len())
                }
            },
        };
        reader.consume(used);
        if line.len() > MAX_LINE_BYTES {
            let _ = lines.send(Event::TooLong { generation });
            return;
        }
        if done {
            let bytes = std::mem::take(&mut line);
            if !bytes.iter().all(u8::is_ascii_whitespace)
                && lines.send(Event::Line { generation, bytes }).is_err()
            {
                return;
            }
        }
    }
}

/// Keeps the last [`STDERR_KEPT`] bytes of `stderr`.
fn keep_tail(mut stderr: impl Read, kept: &Mutex<Vec<u8>>) {
    let mut buf = [0u8; 4096];
    while let Ok(n) = stderr.read(&mut buf) {
        if n == 0 {
            return;
        }
        let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.extend_from_slice(&buf[..n]);
        let excess = kept.len().saturating_sub(STDERR_KEPT);
        kept.drain(..excess);
    }
}

/// Why a stream ended, from the command's exit and the end of its stderr.
pub(crate) fn why_ended(remote: &Remote, status: Option<ExitStatus>, stderr: &str) -> Down {
    let by_hand = remote.by_hand();
    if stderr.contains("Host key verification failed")
        || stderr.contains("REMOTE HOST IDENTIFICATION HAS CHANGED")
    {
        return Down::HostKey { by_hand };
    }
    if stderr.contains("Permission denied") || stderr.contains("Too many authentication failures") {
        return Down::Auth { by_hand };
    }
    if status.and_then(|s| s.code()) == Some(127) {
        return Down::NotSetUp;
    }
    let last = stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or(if status.is_some_and(|s| s.success()) {
            "its stream ended"
        } else {
            ""
        });
    Down::Unreachable {
        detail: stream::clean(last),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn why_a_link_ended_is_told_from_ssh_s_own_words() {
        let remote = Remote::parse("me@build-box").unwrap();
        assert!(matches!(
            why_ended(&remote, None, "Host key verification failed.\r\n"),
            Down::HostKey { .. }
        ));
        assert!(matches!(
            why_ended(
                &remote,
                None,
                "me@build-box: Permission denied (publickey).\n"
            ),
            Down::Auth { .. }
        ));
        assert_eq!(
            why_ended(
                &remote,
                None,
                "ssh: connect to host build-box port 22: Connection refused\r\n"
            ),
            Down::Unreachable {
                detail: "ssh: connect to host build-box port 22: Connection refused".into()
            }
        );
    }

    #[test]
    fn lines_are_bounded_and_blank_ones_skipped() {
        let (tx, rx) = mpsc::sync_channel(8);
        let input = b"{\"a\":1}\n\n  \n{\"b\":2}\n".to_vec();
        read_lines(&input[..], &tx, 7);
        let got: Vec<_> = rx.try_iter().collect();
        assert!(matches!(&got[0], Event::Line { generation: 7, bytes } if bytes == b"{\"a\":1}"));
        assert!(matches!(&got[1], Event::Line { bytes, .. } if bytes == b"{\"b\":2}"));
        assert!(matches!(got[2], Event::End { generation: 7 }));
        let (tx, rx) = mpsc::sync_channel(8);
        let huge = vec![b'x'; MAX_LINE_BYTES + 10];
        read_lines(&huge[..], &tx, 1);
        assert!(matches!(
            rx.try_recv(),
            Ok(Event::TooLong { generation: 1 })
        ));
    }
}
