//! A child process and everything it starts, ended together: the one place that runs a
//! program we must be able to stop whole (`fabric-mcp`, git).
//!
//! - **Unix**: the child leads a new process group (`process_group(0)`); ending it sends
//!   SIGKILL to the whole group, so a hook, a credential helper or a wrapper's `sleep` it
//!   started goes too. The leader is watched with `waitid(WNOWAIT)` and reaped only after the
//!   group is signalled, so its pid (the group's id) cannot be reused meanwhile.
//! - **Windows**: the child is put in a job object (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`);
//!   ending it terminates the job. A process the child starts in the instant before it is
//!   assigned to the job escapes it (the child is not started suspended).
//!
//! Dropping a [`GroupChild`] that was not ended ends its group (tokio's orphan reaper then
//! collects the leader).

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};
use tokio::time::Instant;

/// How often an exit is looked for.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// A running child in its own process group (Unix) or job object (Windows).
pub struct GroupChild {
    child: Child,
    #[cfg(windows)]
    job: Option<job::Job>,
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
        #[cfg(unix)]
        command.process_group(0);
        let child = command.spawn()?;
        #[cfg(windows)]
        let job = job::Job::new().filter(|job| child.raw_handle().is_some_and(|h| job.assign(h)));
        Ok(GroupChild {
            child,
            #[cfg(windows)]
            job,
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
            let ((), collected) = tokio::join!(
                async {
                    while !self.exited() {
                        tokio::time::sleep(EXIT_POLL).await;
                    }
                    // Exited: end what it left behind, which also closes their copies of
                    // the pipe.
                    self.kill_group();
                },
                collect
            );
            collected
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
            let Some(pid) = self.child.id() else {
                return true;
            };
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
        #[cfg(not(unix))]
        {
            // The job, not the pid, names what is ended: reaping first is safe here.
            !matches!(self.child.try_wait(), Ok(None))
        }
    }

    /// Kills the whole group (Unix) or job (Windows), and the child itself.
    fn kill_group(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.child.id() {
            // SAFETY: signalling the process group we created for this child, whose leader
            // is not reaped yet.
            unsafe {
                libc::killpg(pid as libc::pid_t, libc::SIGKILL);
            }
        }
        #[cfg(windows)]
        if let Some(job) = &self.job {
            job.terminate();
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
