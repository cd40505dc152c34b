//! Remote state to the tray's board, over a real sshd on loopback: a session at the remote
//! (our hooks run by a long-lived shell of the remote user, standing for its host process)
//! asks for permission, then goes on; each change is timed from the hook's start to the
//! board's callback saying the new state (what wakes the tray's reader). Prints the median,
//! the 90th percentile and the worst of `RUNS` changes (default 40); then, over `IDLE_SECS`
//! (default 30) with nothing changing, the CPU time of this process (the link's threads), of
//! its `ssh` and of the remote's `status --json --follow`, and this process's resident memory
//! before the link and with it up.
//!
//! Needs root (test-support's `ssh_remote` makes a user and starts sshd) and a built
//! `fabric-session` (`FABRIC_SESSION_BIN`, else `target/<profile>/fabric-session` beside this
//! bench). `cargo bench -p companion-remotes --bench remote_latency`.

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("remote_latency: Linux only (a real sshd and a user made for it)");
}

#[cfg(target_os = "linux")]
fn main() {
    bench::run();
}

#[cfg(target_os = "linux")]
mod bench {
    use std::path::PathBuf;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use companion_remotes::board::{Board, LinkState};
    use companion_remotes::link::{Link, LinkSettings};
    use companion_remotes::remote::Remote;
    use companion_sessions::session_state::SessionState;
    use test_support::ssh_remote::{SshRemote, write_as_remote};

    fn session_binary() -> PathBuf {
        if let Some(path) = std::env::var_os("FABRIC_SESSION_BIN") {
            return path.into();
        }
        // target/<profile>/deps/remote_latency-… → target/<profile>/fabric-session
        let me = std::env::current_exe().unwrap();
        let profile = me.parent().unwrap().parent().unwrap();
        let path = profile.join("fabric-session");
        assert!(
            path.exists(),
            "no {}: build fabric-session first (or set FABRIC_SESSION_BIN)",
            path.display()
        );
        path
    }

    pub fn run() {
        let runs: usize = std::env::var("RUNS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(40);
        let Some(remote) = SshRemote::start("remote_latency") else {
            eprintln!("remote_latency: cannot run here (see above)");
            return;
        };
        // Our program at its stable path there, Fabric "running" there, fabric registered.
        remote.put_program(&std::fs::read(session_binary()).unwrap());
        write_as_remote(
            &remote,
            ".claude.json",
            r#"{"mcpServers": {"fabric": {"command": "fabric-mcp"}}}"#,
        );
        remote.fabric_running(|pid, fabric_dir| {
            fabric_fake::files::hub_text(fabric_dir, &["session-hooks/1"], pid)
        });

        // The session's host process there: a shell of the remote user that runs the hooks.
        let mut shell = remote.hook_shell("bench-1");
        shell.hook("session-start");
        shell.hook("user-prompt-submit");

        let (changed, changes) = mpsc::channel();
        let board = Board::new(move || {
            let _ = changed.send(Instant::now());
        });
        unsafe { std::env::set_var("FABRIC_SSH_CONFIG", remote.config()) };
        let spec = Remote::parse(remote.alias()).unwrap();
        let rss_before = rss_kib(std::process::id());
        let _link = Link::start(spec, board.clone(), LinkSettings::from_env()).unwrap();
        let state = || {
            board.entries().first().and_then(|e| {
                matches!(e.link, LinkState::Up { .. })
                    .then(|| {
                        e.sessions
                            .iter()
                            .find(|s| s.id == "bench-1")
                            .map(|s| s.state)
                    })
                    .flatten()
            })
        };
        let wait_for = |want: SessionState| -> Instant {
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                let at = changes
                    .recv_timeout(left)
                    .expect("the board did not change");
                if state() == Some(want) {
                    return at;
                }
            }
        };
        wait_for(SessionState::Working);
        let mut took = Vec::new();
        for _ in 0..runs {
            for (cli_event, want) in [
                ("permission-request", SessionState::NeedsYou),
                ("post-tool-use", SessionState::Working),
            ] {
                std::thread::sleep(Duration::from_millis(300));
                let started = Instant::now();
                shell.hook(cli_event);
                took.push(wait_for(want) - started);
            }
        }
        let rss_up = rss_kib(std::process::id());
        let idle: u64 = std::env::var("IDLE_SECS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(30);
        let me = std::process::id();
        let remote_uid: u32 = String::from_utf8_lossy(&remote.run_as_remote("id -u").stdout)
            .trim()
            .parse()
            .unwrap();
        let ssh_children = || processes(|stat, _| stat.comm == "ssh" && stat.ppid == me);
        let followers =
            || processes(|stat, uid| stat.comm == "fabric-session" && uid == remote_uid);
        let ticks = |pids: &[u32]| pids.iter().map(|p| cpu_ticks(*p)).sum::<u64>();
        let (ssh, follow) = (ssh_children(), followers());
        let before = (cpu_ticks(me), ticks(&ssh), ticks(&follow));
        std::thread::sleep(Duration::from_secs(idle));
        let after = (cpu_ticks(me), ticks(&ssh), ticks(&follow));
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        let percent = |a: u64, b: u64| (b - a) as f64 / hz / idle as f64 * 100.0;
        println!(
            "idle {idle} s: this process {:.2} % CPU, its ssh ({}) {:.2} %, the remote's follow ({}) {:.2} %",
            percent(before.0, after.0),
            ssh.len(),
            percent(before.1, after.1),
            follow.len(),
            percent(before.2, after.2)
        );
        println!(
            "resident memory: {rss_before} KiB before the link, {rss_up} KiB with it up (+{} KiB)",
            rss_up.saturating_sub(rss_before)
        );
        drop(shell);
        took.sort();
        let at = |q: f64| took[((took.len() - 1) as f64 * q).round() as usize];
        println!(
            "remote state to the board over ssh on loopback, {} changes: median {:.0} ms, p90 {:.0} ms, worst {:.0} ms",
            took.len(),
            at(0.5).as_secs_f64() * 1e3,
            at(0.9).as_secs_f64() * 1e3,
            took.last().unwrap().as_secs_f64() * 1e3
        );
    }

    struct Stat {
        comm: String,
        ppid: u32,
    }

    fn stat_of(pid: u32) -> Option<(Stat, Vec<String>)> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let open = text.find('(')?;
        let close = text.rfind(')')?;
        let comm = text[open + 1..close].to_string();
        let rest: Vec<String> = text[close + 2..]
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let ppid = rest.get(1)?.parse().ok()?;
        Some((Stat { comm, ppid }, rest))
    }

    /// utime + stime, in clock ticks.
    fn cpu_ticks(pid: u32) -> u64 {
        stat_of(pid)
            .map(|(_, rest)| {
                rest.get(11)
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0)
                    + rest
                        .get(12)
                        .and_then(|v| v.parse::<u64>().ok())
                        .unwrap_or(0)
            })
            .unwrap_or(0)
    }

    fn processes(keep: impl Fn(&Stat, u32) -> bool) -> Vec<u32> {
        use std::os::unix::fs::MetadataExt;
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let pid: u32 = e.file_name().to_str()?.parse().ok()?;
                let uid = e.metadata().ok()?.uid();
                let (stat, _) = stat_of(pid)?;
                keep(&stat, uid).then_some(pid)
            })
            .collect()
    }

    fn rss_kib(pid: u32) -> u64 {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }
}
