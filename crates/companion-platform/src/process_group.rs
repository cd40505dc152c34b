//! A child process and everything it starts, ended together: the operating system's part
//! ([`prepare`], [`Group`], [`exited_unreaped`]) that `fabric-client`'s async children
//! (`fabric-mcp`, git) and the synchronous [`output`] (tmux, for `session-focus`) share.
//!
//! - **Unix**: the child leads a new process group; ending the [`Group`] sends SIGKILL to all
//!   of it, so a hook, a helper or a wrapper's `sleep` the child started goes too. The leader
//!   is watched with `waitid(WNOWAIT)` ([`exited_unreaped`]) and reaped only after the group
//!   is signalled, so its pid (the group's id) cannot be reused meanwhile.
//! - **Windows**: the child (with no console window, [`prepare`]) is put in a job object that
//!   kills its processes when ended or closed. A process the child starts in the instant before it is assigned to the job
//!   escapes it (the child is not started suspended).
//!
//! [`output`] runs a helper program to its end, bounded: its stdout read while it runs (a
//! full pipe never stalls it) up to a cap, within a deadline; at either limit the group is
//! killed and the child reaped.

use std::io::{self, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How often [`output`] looks whether the child has exited.
const EXIT_POLL: Duration = Duration::from_millis(5);

/// Makes `command` start its child as the leader of a new process group (Unix). On Windows,
/// where the [`Group`] is a job object made after the start, it gets a console of its own
/// with no window (`CREATE_NO_WINDOW`): a console program started from the tray (which has no
/// console) or the worker never flashes a window.
pub fn prepare(command: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        command.creation_flags(windows_sys::Win32::System::Threading::CREATE_NO_WINDOW);
    }
    #[cfg(not(any(unix, windows)))]
    let _ = command;
}

/// A started child's group: its process group (Unix) or job object (Windows).
#[derive(Debug)]
pub struct Group {
    #[cfg(unix)]
    leader: u32,
    #[cfg(windows)]
    job: Option<job::Job>,
}

impl Group {
    /// The group of a child started after [`prepare`]: its pid (Unix, the group's id) and
    /// its process handle (Windows, assigned to a new job).
    pub fn of(pid: u32, #[cfg(windows)] process: std::os::windows::io::RawHandle) -> Group {
        #[cfg(unix)]
        {
            Group { leader: pid }
        }
        #[cfg(windows)]
        {
            let _ = pid;
            Group {
                job: job::Job::new().filter(|job| job.assign(process)),
            }
        }
        #[cfg(not(any(unix, windows)))]
        {
            let _ = pid;
            Group {}
        }
    }

    /// Kills every process of the group. Unix: the leader must not be reaped yet.
    pub fn kill(&self) {
        #[cfg(unix)]
        // SAFETY: signalling the process group we created for our child, whose leader is
        // not reaped yet (so its id names no other group).
        unsafe {
            libc::killpg(self.leader as libc::pid_t, libc::SIGKILL);
        }
        #[cfg(windows)]
        if let Some(job) = &self.job {
            job.terminate();
        }
    }
}

/// Whether our child `pid` has exited, leaving it unreaped (`waitid` with `WNOWAIT`), so its
/// group can still be signalled by its id. Unix only.
#[cfg(unix)]
pub fn exited_unreaped(pid: u32) -> bool {
    // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid on our own child, WNOHANG | WNOWAIT: it neither blocks nor reaps.
    let rc = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // A child that changed state fills in SIGCHLD; none leaves the zeroed 0.
    rc == 0 && info.si_signo == libc::SIGCHLD
}

/// Why [`output`] has no output to give.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot start it: {0}")]
    Spawn(#[source] io::Error),
    #[error("it did not finish within {0:?}")]
    Deadline(Duration),
    #[error("it printed more than {0} bytes")]
    TooMuchOutput(u64),
    #[error("its output could not be read: {0}")]
    Read(#[source] io::Error),
}

/// What [`output`] gives back.
#[derive(Debug)]
pub struct Output {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
}

/// Runs `command` (stdin and stderr null, stdout read) in its own group, to its end within
/// `timeout`, keeping at most `limit` bytes of stdout. Its stdout is read on a thread while
/// it runs; past the deadline or the limit, the whole group is killed and the child reaped.
/// When the child exits in time, whatever it started is ended too (a process left holding
/// stdout would otherwise hold the read).
pub fn output(command: &mut Command, timeout: Duration, limit: u64) -> Result<Output, RunError> {
    prepare(command);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command.spawn().map_err(RunError::Spawn)?;
    let group = group_of(&child);
    let deadline = crate::clock::deadline_after(Instant::now(), timeout);
    let (sent, read) = mpsc::channel();
    if let Some(stdout) = child.stdout.take() {
        // The thread ends at the end of the output or at the limit; a process that escaped
        // the group keeping the pipe open keeps only this thread waiting, never the caller.
        let spawned = std::thread::Builder::new()
            .name("child-output".into())
            .spawn(move || {
                let mut buf = Vec::new();
                let result = stdout
                    .take(limit.saturating_add(1))
                    .read_to_end(&mut buf)
                    .map(|_| buf);
                let _ = sent.send(result);
            });
        if let Err(error) = spawned {
            end(&mut child, &group);
            return Err(RunError::Read(error));
        }
    } else {
        let _ = sent.send(Ok(Vec::new()));
    }
    // Until the child exits, the output ends (at the limit, say) or the deadline passes.
    let mut collected = None;
    loop {
        if collected.is_none() {
            match read.try_recv() {
                Ok(result) => collected = Some(result),
                Err(mpsc::TryRecvError::Empty) => {}
                Err(mpsc::TryRecvError::Disconnected) => {
                    collected = Some(Err(io::Error::other("the reader stopped")))
                }
            }
        }
        let too_much = matches!(&collected, Some(Ok(buf)) if buf.len() as u64 > limit);
        if too_much || has_exited(&mut child) {
            break;
        }
        if Instant::now() >= deadline {
            end(&mut child, &group);
            return Err(RunError::Deadline(timeout));
        }
        std::thread::sleep(EXIT_POLL);
    }
    // Exited (or past the limit): end what it left behind, then the rest of the output.
    group.kill();
    let status = child.wait().map_err(RunError::Read)?;
    let stdout = match collected {
        Some(result) => result,
        None => read
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .map_err(|_| RunError::Deadline(timeout))?,
    }
    .map_err(RunError::Read)?;
    if stdout.len() as u64 > limit {
        return Err(RunError::TooMuchOutput(limit));
    }
    Ok(Output { status, stdout })
}

fn group_of(child: &Child) -> Group {
    #[cfg(windows)]
    {
        use std::os::windows::io::AsRawHandle;
        Group::of(child.id(), child.as_raw_handle())
    }
    #[cfg(not(windows))]
    Group::of(child.id())
}

/// Whether the child exited (Unix: unreaped, see [`exited_unreaped`]).
fn has_exited(child: &mut Child) -> bool {
    #[cfg(unix)]
    {
        exited_unreaped(child.id())
    }
    #[cfg(not(unix))]
    {
        !matches!(child.try_wait(), Ok(None))
    }
}

/// Kills the group and the child, and reaps it.
fn end(child: &mut Child, group: &Group) {
    group.kill();
    let _ = child.kill();
    let _ = child.wait();
}

/// A job object that ends its processes when terminated or closed.
#[cfg(windows)]
mod job {
    use std::os::windows::io::RawHandle;

    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
    use windows_sys::Win32::System::JobObjects::{
        AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
        SetInformationJobObject, TerminateJobObject,
    };

    #[derive(Debug)]
    pub struct Job(HANDLE);

    // SAFETY: a job handle may be used and closed from any thread.
    unsafe impl Send for Job {}
    // SAFETY: the calls made through a shared reference (assign, terminate) are thread-safe.
    unsafe impl Sync for Job {}

    impl Job {
        /// A new, unnamed job whose processes die when its last handle closes.
        pub fn new() -> Option<Job> {
            // SAFETY: no security attributes, no name.
            let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
            if handle.is_null() {
                return None;
            }
            let job = Job(handle);
            // SAFETY: a zeroed limit information is valid; only the flag below is set.
            let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
            limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            // SAFETY: the structure and its size match the information class.
            let ok = unsafe {
                SetInformationJobObject(
                    job.0,
                    JobObjectExtendedLimitInformation,
                    (&limits as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                    std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
                )
            };
            (ok != 0).then_some(job)
        }

        /// Puts the process in the job; false when Windows refuses.
        pub fn assign(&self, process: RawHandle) -> bool {
            // SAFETY: both handles are live: the job ours, the process the child's.
            unsafe { AssignProcessToJobObject(self.0, process as HANDLE) != 0 }
        }

        /// Ends every process in the job.
        pub fn terminate(&self) {
            // SAFETY: our live job handle.
            unsafe {
                TerminateJobObject(self.0, 1);
            }
        }
    }

    impl Drop for Job {
        fn drop(&mut self) {
            // SAFETY: our job handle, closed once.
            unsafe {
                CloseHandle(self.0);
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.arg("-c").arg(script);
        command
    }

    #[test]
    fn output_larger_than_a_pipe_is_read_while_it_runs() {
        // 200,000 bytes: three times what a pipe holds before the writer blocks.
        let out = output(
            &mut sh("head -c 200000 /dev/zero | tr '\\0' x; echo"),
            Duration::from_secs(20),
            1024 * 1024,
        )
        .unwrap();
        assert!(out.status.success());
        assert_eq!(out.stdout.len(), 200_001);
    }

    #[test]
    fn endless_output_stops_at_the_limit_and_the_child_is_killed() {
        let err = output(&mut sh("yes"), Duration::from_secs(20), 64 * 1024).unwrap_err();
        assert!(matches!(err, RunError::TooMuchOutput(_)), "{err}");
    }

    #[test]
    fn a_hang_and_what_it_started_end_at_the_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let script = format!("sleep 1000 & echo $! > '{}'; sleep 1000", pids.display());
        let err = output(&mut sh(&script), Duration::from_millis(300), 1024).unwrap_err();
        assert!(matches!(err, RunError::Deadline(_)), "{err}");
        let background: u32 = std::fs::read_to_string(&pids)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let gone = || {
            std::fs::read_to_string(format!("/proc/{background}/stat")).map_or(true, |s| {
                s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z'))
            })
        };
        let until = Instant::now() + Duration::from_secs(5);
        while !gone() {
            assert!(
                Instant::now() < until,
                "the background sleep outlived the deadline"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_child_left_holding_the_output_is_ended_when_the_program_exits() {
        let started = Instant::now();
        let out = output(
            &mut sh("sleep 1000 & echo done"),
            Duration::from_secs(20),
            1024,
        )
        .unwrap();
        assert_eq!(out.stdout, b"done\n");
        assert!(started.elapsed() < Duration::from_secs(15));
    }
}
