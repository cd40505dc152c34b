//! How the process starts and ends on Linux, where `main.rs` skips std's runtime start-up.
//!
//! A hook must answer in about a millisecond, and std's start costs as much as the hook's own
//! work: it finds the main thread's stack guard by having glibc parse `/proc/self/maps` with
//! `sscanf` (measured with callgrind: a fifth of a session-start's instructions). This module
//! does the parts of that start-up we rely on, and nothing else:
//!
//! - file descriptors 0, 1 and 2 are open, on `/dev/null` when the host closed one, so a file
//!   we open (the log, a spool file) never becomes our stdout and receives the answer;
//! - `SIGPIPE` is ignored, so a host that stopped reading makes our write fail (and the hook
//!   still exits 0) instead of killing us by a signal;
//! - stdout is flushed before the process ends.
//!
//! What is left out is the stack-overflow handler's message: a stack overflow still ends the
//! process (SIGSEGV), only without std's one-line explanation. On other systems std's own
//! start-up runs and this module is not used.

/// What std would have done before `main`.
pub fn prepare() {
    // SAFETY: poll, open and signal are called with valid arguments; nothing else runs yet.
    unsafe {
        let mut fds = [
            libc::pollfd {
                fd: 0,
                events: 0,
                revents: 0,
            },
            libc::pollfd {
                fd: 1,
                events: 0,
                revents: 0,
            },
            libc::pollfd {
                fd: 2,
                events: 0,
                revents: 0,
            },
        ];
        let polled = loop {
            let rc = libc::poll(fds.as_mut_ptr(), 3, 0);
            if rc != -1 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break rc;
            }
        };
        if polled == -1 {
            // poll refused (some sandboxes): ask each descriptor instead.
            for pfd in &mut fds {
                if libc::fcntl(pfd.fd, libc::F_GETFD) == -1 {
                    pfd.revents = libc::POLLNVAL;
                }
            }
        }
        for pfd in &fds {
            if pfd.revents & libc::POLLNVAL != 0 {
                // Opens the lowest free descriptor: this one.
                libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            }
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// What std would have done after `main`.
pub fn finish() {
    use std::io::Write;
    let _ = std::io::stdout().flush();
}
