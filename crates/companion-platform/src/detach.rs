//! Starting one of our programs without keeping it: the hooks' worker, the dashboard from the
//! tray, the tray from the dashboard, a file viewer. This is the one place that knows how.
//!
//! - Unix: a double fork. The intermediate process exits at once and is reaped here, so the
//!   program is nobody's waited child (no zombie in a long-running caller, nothing the caller
//!   has to wait for); it runs in its own session (`setsid`), so a host killing the hook's
//!   process group or terminal does not reach it.
//! - Windows: a console of its own that has no window (`CREATE_NO_WINDOW`: nothing flashes,
//!   and the programs it starts in turn, `fabric-mcp` and `git`, share that hidden console
//!   instead of each opening a window, as they would under `DETACHED_PROCESS`), in a new
//!   process group (a Ctrl+C or Ctrl+Break sent to the host's console does not reach it), and
//!   out of the host's job object (`CREATE_BREAKAWAY_FROM_JOB`: a host that ends its hook's
//!   job when the hook exits does not end the worker). A job that allows no breakaway refuses
//!   that flag; the program is then started inside it, the best there is. Our own standard
//!   handles stop being inheritable first: Windows hands every inheritable handle to a child
//!   whatever its standard handles are, and a worker holding the host's stdout pipe open
//!   would keep the host (which reads to the end) waiting on the hook until the worker ends.
//!
//! Everywhere stdin, stdout and stderr are the null device: the program never reads the
//! caller's terminal nor writes into a host's pipes. An error to start it (say, a missing
//! program) is returned; the program's own exit is never waited for.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

/// Starts `program` with `args`, detached. Returns once it has been started.
pub fn spawn_detached<S: AsRef<OsStr>>(program: &Path, args: &[S]) -> std::io::Result<()> {
    spawn_detached_without(program, args, &[])
}

/// [`spawn_detached`], with the variables `unset` taken out of the program's environment.
pub fn spawn_detached_without<S: AsRef<OsStr>>(
    program: &Path,
    args: &[S],
    unset: &[&str],
) -> std::io::Result<()> {
    let mut command = Command::new(program);
    for name in unset {
        command.env_remove(name);
    }
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: only async-signal-safe calls (fork, _exit, setsid) run between fork and exec.
        // An exec failure in the grandchild still reaches `spawn` through std's CLOEXEC pipe,
        // whose write end the grandchild inherits.
        unsafe {
            command.pre_exec(|| {
                match libc::fork() {
                    -1 => return Err(std::io::Error::last_os_error()),
                    0 => {}
                    _ => libc::_exit(0),
                }
                libc::setsid();
                Ok(())
            });
        }
    }
    #[cfg(windows)]
    let child = {
        use std::os::windows::process::CommandExt;
        keep_std_handles_to_ourselves();
        use windows_sys::Win32::System::Threading::{
            CREATE_BREAKAWAY_FROM_JOB, CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW,
        };
        let flags = CREATE_NO_WINDOW | CREATE_NEW_PROCESS_GROUP;
        command.creation_flags(flags | CREATE_BREAKAWAY_FROM_JOB);
        match command.spawn() {
            // A job without JOB_OBJECT_LIMIT_BREAKAWAY_OK refuses the breakaway.
            Err(err) if err.kind() == std::io::ErrorKind::PermissionDenied => {
                command.creation_flags(flags);
                command.spawn()?
            }
            result => result?,
        }
    };
    #[cfg(not(windows))]
    let child = command.spawn()?;
    // Unix: the intermediate process has exited already; reap it so it leaves no zombie.
    #[cfg(unix)]
    {
        let mut child = child;
        let _ = child.wait();
    }
    #[cfg(not(unix))]
    drop(child);
    Ok(())
}

/// Clears the inherit flag of this process's standard handles (a host's pipes, which came to
/// us inheritable), so no program we start holds them. A program we start with
/// `Stdio::inherit` still gets them: the standard library duplicates them for it.
#[cfg(windows)]
fn keep_std_handles_to_ourselves() {
    use windows_sys::Win32::Foundation::{HANDLE_FLAG_INHERIT, SetHandleInformation};
    use windows_sys::Win32::System::Console::{
        GetStdHandle, STD_ERROR_HANDLE, STD_INPUT_HANDLE, STD_OUTPUT_HANDLE,
    };
    for which in [STD_INPUT_HANDLE, STD_OUTPUT_HANDLE, STD_ERROR_HANDLE] {
        // SAFETY: GetStdHandle has no preconditions; a null or invalid handle makes
        // SetHandleInformation fail harmlessly.
        unsafe {
            let handle = GetStdHandle(which);
            if !handle.is_null() {
                SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0);
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_detached_program_is_not_our_child_and_runs_in_its_own_session() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let script = format!(
            "echo $$ $PPID $(ps -o sid= -p $$) > {0}.tmp && mv {0}.tmp {0}",
            out.display()
        );
        spawn_detached(Path::new("sh"), &["-c", &script]).unwrap();
        let start = std::time::Instant::now();
        while !out.exists() {
            assert!(start.elapsed().as_secs() < 20, "the program did not run");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let text = std::fs::read_to_string(&out).unwrap();
        let fields: Vec<u32> = text
            .split_whitespace()
            .map(|w| w.parse().unwrap())
            .collect();
        assert_ne!(fields[1], std::process::id(), "not our child");
        assert_eq!(fields[2], fields[0], "a session leader");
    }

    #[test]
    fn a_missing_program_is_an_error() {
        assert!(spawn_detached(Path::new("/nonexistent/program"), &[] as &[&str]).is_err());
    }
}
