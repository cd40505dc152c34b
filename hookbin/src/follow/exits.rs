//! (Linux) The host processes of the listed sessions, watched for their end through pidfds
//! (`pidfd_open(2)`, Linux 5.3): a session leaves `sessions` when its host process ends,
//! which changes no file. At most [`MAX_PROCESSES`]; where a pidfd is refused (an older
//! kernel, the limit on descriptors) the watch is incomplete and the caller reads the status
//! again on a timer.

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The most host processes watched.
pub const MAX_PROCESSES: usize = 512;

#[derive(Debug, Default)]
pub struct Exits {
    fds: HashMap<u32, OwnedFd>,
    /// Ended, already told: not watched again while the status still lists them.
    ended: HashSet<u32>,
    incomplete: bool,
}

impl Exits {
    /// Watches exactly these processes (the hosts of the sessions just listed).
    pub fn track(&mut self, pids: &[u32]) {
        let listed: HashSet<u32> = pids.iter().copied().collect();
        self.fds.retain(|pid, _| listed.contains(pid));
        self.ended.retain(|pid| listed.contains(pid));
        self.incomplete = false;
        for &pid in pids {
            if self.fds.contains_key(&pid) {
                continue;
            }
            // Ended, yet still listed (read a moment too early): the timer reads again.
            if self.ended.contains(&pid) {
                self.incomplete = true;
                continue;
            }
            if self.fds.len() >= MAX_PROCESSES {
                self.incomplete = true;
                break;
            }
            match pidfd_open(pid) {
                Some(fd) => {
                    self.fds.insert(pid, fd);
                }
                None => self.incomplete = true,
            }
        }
    }

    /// The descriptors to poll, each readable once its process ended.
    pub fn fds(&self) -> Vec<(u32, RawFd)> {
        self.fds
            .iter()
            .map(|(&pid, fd)| (pid, fd.as_raw_fd()))
            .collect()
    }

    /// The process ended: its descriptor is dropped (it would stay readable).
    pub fn ended(&mut self, pid: u32) {
        self.fds.remove(&pid);
        self.ended.insert(pid);
    }

    /// Some process could not be watched.
    pub fn incomplete(&self) -> bool {
        self.incomplete
    }
}

fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    let pid = libc::pid_t::try_from(pid).ok().filter(|&p| p > 0)?;
    // SAFETY: pidfd_open takes a pid and flags; the result is checked.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = RawFd::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: a fresh descriptor nothing else owns (pidfds are close-on-exec).
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}
