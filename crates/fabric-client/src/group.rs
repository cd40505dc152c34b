//! A child process and everything it starts, ended together, on tokio: the one place this
//! crate runs a program it must be able to stop whole (`fabric-mcp`, git). The operating
//! system's part (a process group on Unix, a job object on Windows) is the core's
//! [`companion_platform::process_group`]; this adds waiting, reading and deadlines on tokio.
//!
//! Dropping a [`GroupChild`] that was not ended ends its group (tokio's orphan reaper then
//! collects the leader).

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use companion_platform::process_group::{self, Group};
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};
use tokio::time::Instant;

/// How often an exit is looked for.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// A running child in its own process group (Unix) or job object (Windows).
pub struct GroupChild {
    child: Child,
    group: Group,
    ended: bool,
}

/// What [`GroupChild::output_until`] gives back.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
}

impl GroupChild {
    /// Starts `command` as the leader of its own group (Unix) or in a job (Windows).
    pub fn spawn(command: &mut Command) -> io::Result<GroupChild> {
        command.kill_on_drop(true);
        process_group::prepare(command.as_std_mut());
        let child = command.spawn()?;
        let pid = child.id().unwrap_or(0);
        #[cfg(windows)]
        let group = match child.raw_handle() {
            Some(handle) => Group::of(pid, handle),
            None => Group::of(pid, std::ptr::null_mut()),
        };
        #[cfg(not(windows))]
        let group = Group::of(pid);
        Ok(GroupChild {
            child,
            group,
            ended: false,
        })
    }

    /// The child's pid (for tests and logs); `None` once reaped.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// The child itself, to take its pipes.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Ends the child and everything it started: a `grace` to exit by itself first (`None`:
    /// none), then the whole group killed, always (a child it started in the background must
    /// not outlive it), then the leader reaped. Its exit status.
    pub async fn end(mut self, grace: Option<Duration>) -> io::Result<ExitStatus> {
        if let Some(grace) = grace {
            let until = crate::deadline::from_now(grace);
            while !self.exited() && Instant::now() < until {
                tokio::time::sleep(EXIT_POLL).await;
            }
        }
        self.kill_group();
        let status = self.child.wait().await;
        self.ended = true;
        status
    }

    /// Runs the child to its end or `deadline`, whichever comes first, collecting its stdout
    /// (at most `limit` bytes; more is a failure). When the child exits, whatever it started
    /// is ended at once (a child left holding stdout open would otherwise hold the read up to
    /// the deadline). `None` past the deadline, past the limit or on a read error; the group
    /// is ended and the leader reaped on every path.
    pub async fn output_until(mut self, deadline: Instant, limit: u64) -> Option<Output> {
        let stdout = self.child.stdout.take();
        let collect = async move {
            let mut buf = Vec::new();
            if let Some(stdout) = stdout {
                // One byte past the limit tells a full read from a cut one.
                stdout
                    .take(limit.saturating_add(1))
                    .read_to_end(&mut buf)
                    .await?;
            }
            Ok::<_, io::Error>(buf)
        };
        let finished = tokio::time::timeout_at(deadline, async {
            tokio::pin!(collect);
            let mut collected = None;
            // Until it exits, or its output ends past the limit (then it is not waited for).
            loop {
                tokio::select! {
                    result = &mut collect, if collected.is_none() => {
                        let over = matches!(&result, Ok(buf) if buf.len() as u64 > limit);
                        collected = Some(result);
                        if over {
                            break;
                        }
                    }
                    () = tokio::time::sleep(EXIT_POLL) => {
                        if self.exited() {
                            break;
                        }
                    }
                }
            }
            // End what it left behind, which also closes their copies of the pipe.
            self.kill_group();
            match collected {
                Some(result) => result,
                None => collect.await,
            }
        })
        .await;
        let status = self.end(None).await.ok()?;
        let stdout = finished.ok()?.ok()?;
        (stdout.len() as u64 <= limit).then_some(Output { status, stdout })
    }

    /// Whether the child has exited. Unix: left unreaped (`waitid` with `WNOWAIT`), so the
    /// group can still be signalled by its id.
    fn exited(&mut self) -> bool {
        #[cfg(unix)]
        {
            self.child.id().is_none_or(process_group::exited_unreaped)
        }
        #[cfg(not(unix))]
        {
            // The job, not the pid, names what is ended: reaping first is safe here.
            !matches!(self.child.try_wait(), Ok(None))
        }
    }

    /// Kills the whole group (Unix) or job (Windows), and the child itself.
    fn kill_group(&mut self) {
        // Unix: once the leader is reaped its id may name another group; it is reaped only
        // in `end`, after this.
        if self.child.id().is_some() {
            self.group.kill();
        }
        let _ = self.child.start_kill();
    }
}

impl Drop for GroupChild {
    /// A run aborted mid-way (a deadline, a shutdown) still ends the child and everything it
    /// started.
    fn drop(&mut self) {
        if !self.ended {
            self.kill_group();
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(script)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped());
        command
    }

    fn far() -> Instant {
        crate::deadline::from_now(Duration::from_secs(20))
    }

    #[tokio::test]
    async fn output_is_collected_while_it_runs_and_what_it_left_ends_with_it() {
        let started = std::time::Instant::now();
        let child = GroupChild::spawn(&mut sh("sleep 1000 & head -c 200000 /dev/zero")).unwrap();
        let out = child.output_until(far(), 1024 * 1024).await.unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout.len(), 200_000);
        assert!(started.elapsed() < Duration::from_secs(15));
    }

    #[tokio::test]
    async fn endless_output_is_cut_at_the_limit_without_waiting_for_the_deadline() {
        let started = std::time::Instant::now();
        let child = GroupChild::spawn(&mut sh("yes")).unwrap();
        assert!(child.output_until(far(), 64 * 1024).await.is_none());
        assert!(started.elapsed() < Duration::from_secs(15));
    }

    #[tokio::test]
    async fn a_hang_ends_at_the_deadline() {
        let child = GroupChild::spawn(&mut sh("sleep 1000")).unwrap();
        let deadline = crate::deadline::from_now(Duration::from_millis(200));
        assert!(child.output_until(deadline, 1024).await.is_none());
    }
}
