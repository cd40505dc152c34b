//! A real OpenSSH remote on this machine, for the remote tests: a fresh Unix user of its own
//! (`fabric-rt-<random>`, with its home), Debian's `/usr/sbin/sshd` on a free loopback port
//! with a host key made for it, a client key in the user's `authorized_keys`, and `ssh`
//! client configs naming it by the alias [`ALIAS`]: one that connects, one that does not know
//! the host's key, one with no key the server takes. Everything goes on drop: every sshd
//! process serving it, every process of the user, the user and its home, the bench's folder.
//!
//! Needs root (making a user, starting sshd) and the packages `openssh-server` and
//! `openssh-client`; [`SshRemote::start`] says why it cannot run otherwise, by the skip-or-fail
//! rule of [`crate::desktop::cannot_run`].

use std::fs;
use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The `Host` alias every config of the bench names the remote by.
pub const ALIAS: &str = "fabric-remote";
const SSHD: &str = "/usr/sbin/sshd";
/// How long sshd may take to accept connections.
const LISTEN_LIMIT: Duration = Duration::from_secs(10);

/// `useradd` and `userdel` lock `/etc/passwd`: benches of one test binary take turns.
static USERS: Mutex<()> = Mutex::new(());

/// Where our program lives at the other end, under the remote user's home (as `fabric-session
/// remote add` puts it).
pub const PROGRAM: &str = ".local/share/fabric-companion/bin/fabric-session";

/// The hooks a [`HookShell`] runs: the command line's event, Claude Code's event name, and
/// what its input holds beyond the session, folder and source.
pub const HOOK_EVENTS: [(&str, &str, &str); 4] = [
    ("session-start", "SessionStart", ""),
    (
        "user-prompt-submit",
        "UserPromptSubmit",
        r#","prompt":"go""#,
    ),
    (
        "permission-request",
        "PermissionRequest",
        r#","tool_name":"Bash""#,
    ),
    ("post-tool-use", "PostToolUse", r#","tool_name":"Bash""#),
];

/// A session's host process at the other end: a shell of the remote user running our hooks
/// (the program at [`PROGRAM`]) with the session's input, one line at a time, as a host runs
/// its hook commands. Ends when dropped (its input closed, the shell waited for).
pub struct HookShell {
    shell: Child,
    lines: std::process::ChildStdin,
}

impl HookShell {
    /// Has the shell run `fabric-session hook <cli_event>` (one of [`HOOK_EVENTS`]) now.
    pub fn hook(&mut self, cli_event: &str) {
        assert!(
            HOOK_EVENTS.iter().any(|(e, _, _)| *e == cli_event),
            "no input for {cli_event}"
        );
        writeln!(
            self.lines,
            "~/{PROGRAM} hook {cli_event} < ~/hook-{cli_event}.json"
        )
        .and_then(|()| self.lines.flush())
        .expect("the hook shell takes a line");
    }
}

impl Drop for HookShell {
    fn drop(&mut self) {
        let _ = writeln!(self.lines, "exit");
        let _ = self.lines.flush();
        let _ = self.shell.wait();
    }
}

/// One running remote: its user, its sshd and the client configs that reach it.
pub struct SshRemote {
    dir: PathBuf,
    user: String,
    uid: u32,
    gid: u32,
    home: PathBuf,
    port: u16,
    sshd_config: PathBuf,
    sshd: Option<Child>,
    config: PathBuf,
    config_unknown_host: PathBuf,
    config_no_key: PathBuf,
}

impl SshRemote {
    /// Makes the user, its keys and configs, and starts sshd, once it accepts connections.
    /// `None` (after saying why, or failing under `$FABRIC_REQUIRE_DESKTOP_TESTS=1`) when this
    /// machine cannot: not root, or sshd, ssh or useradd missing.
    pub fn start(test: &str) -> Option<SshRemote> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            crate::desktop::cannot_run(test, "the ssh bench makes a Unix user: it needs root");
            return None;
        }
        if !Path::new(SSHD).is_file() {
            crate::desktop::cannot_run(test, &format!("{SSHD} not found (package openssh-server)"));
            return None;
        }
        if !crate::desktop::require(
            test,
            &["ssh", "ssh-keygen", "useradd", "userdel"],
            "openssh-client, passwd",
        ) {
            return None;
        }
        Some(SshRemote::make())
    }

    fn make() -> SshRemote {
        let tag = random_tag();
        let user = format!("fabric-rt-{tag}");
        let dir = std::env::temp_dir().join(format!("fabric-ssh-bench-{tag}"));
        fs::create_dir_all(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        add_user(&user);
        let uid = id_of(&user, "-u");
        let gid = id_of(&user, "-g");
        let home = PathBuf::from(format!("/home/{user}"));
        assert!(home.is_dir(), "useradd -m made no {}", home.display());

        // Keys: the server's host key and the client's key pair, no passphrase.
        let host_key = dir.join("host_ed25519");
        let client_key = dir.join("client_ed25519");
        for key in [&host_key, &client_key] {
            run_ok(
                Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", "", "-C", "fabric-bench", "-f"])
                    .arg(key),
                "ssh-keygen",
            );
        }
        let ssh_dir = home.join(".ssh");
        fs::create_dir_all(&ssh_dir).unwrap();
        let authorized = ssh_dir.join("authorized_keys");
        fs::copy(client_key.with_extension("pub"), &authorized).unwrap();
        fs::set_permissions(&ssh_dir, fs::Permissions::from_mode(0o700)).unwrap();
        fs::set_permissions(&authorized, fs::Permissions::from_mode(0o600)).unwrap();
        for path in [&ssh_dir, &authorized] {
            std::os::unix::fs::chown(path, Some(uid), Some(gid)).unwrap();
        }

        let port = free_port();
        let sshd_config = dir.join("sshd_config");
        fs::write(
            &sshd_config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nPidFile none\n\
                 AuthorizedKeysFile .ssh/authorized_keys\nPubkeyAuthentication yes\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n\
                 StrictModes yes\nPermitRootLogin no\nAllowUsers {user}\nPrintMotd no\n\
                 PrintLastLog no\nX11Forwarding no\nLogLevel INFO\n",
                host_key.display()
            ),
        )
        .unwrap();

        // The client's configs: the host key known (from the key's own .pub) or not.
        let host_pub = fs::read_to_string(host_key.with_extension("pub")).unwrap();
        let mut fields = host_pub.split_whitespace();
        let (kind, blob) = (fields.next().unwrap(), fields.next().unwrap());
        let known = dir.join("known_hosts");
        fs::write(&known, format!("[127.0.0.1]:{port} {kind} {blob}\n")).unwrap();
        let unknown = dir.join("known_hosts.empty");
        fs::write(&unknown, "").unwrap();
        let client = |known: &Path, key: bool| {
            let auth = if key {
                format!(
                    "  IdentityFile {}\n  IdentitiesOnly yes\n  PubkeyAuthentication yes\n",
                    client_key.display()
                )
            } else {
                "  PubkeyAuthentication no\n  IdentitiesOnly yes\n".to_string()
            };
            format!(
                "Host {ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n{auth}\
                 \x20 IdentityAgent none\n  PasswordAuthentication no\n  KbdInteractiveAuthentication no\n\
                 \x20 UserKnownHostsFile {}\n  GlobalKnownHostsFile /dev/null\n\
                 \x20 StrictHostKeyChecking yes\n  UpdateHostKeys no\n  ControlMaster no\n\
                 \x20 LogLevel ERROR\n",
                known.display()
            )
        };
        let config = dir.join("ssh_config");
        fs::write(&config, client(&known, true)).unwrap();
        let config_unknown_host = dir.join("ssh_config.unknown-host");
        fs::write(&config_unknown_host, client(&unknown, true)).unwrap();
        let config_no_key = dir.join("ssh_config.no-key");
        fs::write(&config_no_key, client(&known, false)).unwrap();

        let mut remote = SshRemote {
            dir,
            user,
            uid,
            gid,
            home,
            port,
            sshd_config,
            sshd: None,
            config,
            config_unknown_host,
            config_no_key,
        };
        remote.restart_sshd();
        remote
    }

    /// The `Host` alias the configs name the remote by.
    pub fn alias(&self) -> &'static str {
        ALIAS
    }

    /// The client config that connects (for `ssh -F`, `$FABRIC_SSH_CONFIG`).
    pub fn config(&self) -> &Path {
        &self.config
    }

    /// A client config whose known-hosts file does not hold the server's key.
    pub fn config_unknown_host(&self) -> &Path {
        &self.config_unknown_host
    }

    /// A client config with no key the server takes (ssh would want a password).
    pub fn config_no_key(&self) -> &Path {
        &self.config_no_key
    }

    /// The remote user's name.
    pub fn user(&self) -> &str {
        &self.user
    }

    /// The remote user's home folder.
    pub fn home(&self) -> &Path {
        &self.home
    }

    /// sshd's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// sshd's own log (its stderr), for a failing test's message.
    pub fn sshd_log(&self) -> String {
        fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
    }

    /// Puts `bytes` at our program's stable path there ([`PROGRAM`]), executable, over ssh:
    /// written beside it and moved in, so a stream already running is never cut mid-file.
    pub fn put_program(&self, bytes: &[u8]) {
        let mut ssh = Command::new("ssh")
            .arg("-F")
            .arg(self.config())
            .args(["-T", "-o", "BatchMode=yes", "--", ALIAS])
            .arg(format!(
                "mkdir -p \"$(dirname ~/{PROGRAM})\" && cat > ~/{PROGRAM}.new && chmod 755 ~/{PROGRAM}.new && mv -f ~/{PROGRAM}.new ~/{PROGRAM}"
            ))
            .stdin(Stdio::piped())
            .spawn()
            .expect("ssh");
        ssh.stdin
            .take()
            .expect("piped")
            .write_all(bytes)
            .expect("the program sent");
        assert!(ssh.wait().expect("ssh").success(), "{}", self.sshd_log());
    }

    /// Fabric "running" there: a long-lived process of the remote user (killed with the user),
    /// named by the `hub.json` that `hub_json(pid, fabric_dir)` gives, written to Fabric's
    /// folder there (`~/.local/share/passioncode-fabric`) as the remote user's.
    pub fn fabric_running(&self, hub_json: impl FnOnce(u32, &Path) -> String) {
        let out = self.run_as_remote("nohup sleep 3600 >/dev/null 2>&1 & echo $!");
        let pid: u32 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("Fabric's pid there: {e}: {out:?}"));
        let fabric_dir = self.home.join(".local/share/passioncode-fabric");
        let hub = hub_json(pid, &fabric_dir);
        write_as_remote(self, ".local/share/passioncode-fabric/hub.json", &hub);
    }

    /// A session's host process there ([`HookShell`]): Claude Code's hook input for session
    /// `session` in `~/proj` written for each of [`HOOK_EVENTS`], and a long-lived shell of the
    /// remote user that runs our hooks on them, one line at a time.
    pub fn hook_shell(&self, session: &str) -> HookShell {
        let proj = self.home.join("proj");
        for (cli_event, event, extra) in HOOK_EVENTS {
            write_as_remote(
                self,
                &format!("hook-{cli_event}.json"),
                &format!(
                    r#"{{"session_id":"{session}","cwd":"{}","hook_event_name":"{event}","source":"startup"{extra}}}"#,
                    proj.display()
                ),
            );
        }
        let made = self.run_as_remote("mkdir -p ~/proj");
        assert!(made.status.success(), "{made:?}");
        let mut shell = self
            .command_as_remote("/bin/sh")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("sh as the remote user");
        let lines = shell.stdin.take().expect("piped");
        HookShell { shell, lines }
    }

    /// Runs `script` with `sh -c` as the remote user (its home, a plain `PATH`), to its end.
    pub fn run_as_remote(&self, script: &str) -> Output {
        self.command_as_remote("/bin/sh")
            .args(["-c", script])
            .stdin(Stdio::null())
            .output()
            .expect("sh as the remote user")
    }

    /// `program` to be run as the remote user (its home, a plain `PATH`), for a caller that
    /// keeps it running (a shell that stands for an agent's host process, say).
    pub fn command_as_remote(&self, program: &str) -> Command {
        self.as_remote()(program)
    }

    /// What [`SshRemote::command_as_remote`] does, as a function that outlives this borrow
    /// (for a harness that keeps making commands: a tmux server's, say).
    pub fn as_remote(&self) -> impl Fn(&str) -> Command + Send + Sync + 'static {
        let (home, user, uid, gid) = (self.home.clone(), self.user.clone(), self.uid, self.gid);
        move |program: &str| {
            let mut command = Command::new(program);
            command
                .env_clear()
                .env("HOME", &home)
                .env("USER", &user)
                .env("LOGNAME", &user)
                .env("PATH", "/usr/local/bin:/usr/bin:/bin")
                .current_dir(&home)
                .uid(uid)
                .gid(gid);
            command
        }
    }

    /// `ssh -F <config> fabric-remote <remote command>`, with a bounded connect, to its end.
    pub fn ssh(&self, config: &Path, remote_command: &str) -> Output {
        Command::new("ssh")
            .arg("-F")
            .arg(config)
            .args(["-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "--"])
            .arg(ALIAS)
            .arg(remote_command)
            .stdin(Stdio::null())
            .output()
            .expect("ssh")
    }

    /// Kills the listening sshd and every sshd (and session) serving it: the remote drops
    /// off as a machine that went away does.
    pub fn kill_sshd(&mut self) {
        let Some(mut sshd) = self.sshd.take() else {
            return;
        };
        let listener = sshd.id();
        // Its connections' processes are its descendants (each calls setsid and renames
        // itself, so neither the group nor the command line finds them): collected before
        // the listener dies, so none is handed to init first.
        let mut doomed = descendants(listener);
        doomed.push(listener);
        for pid in &doomed {
            // SAFETY: signalling processes we just found under our own sshd child.
            unsafe {
                libc::kill(*pid as libc::pid_t, libc::SIGKILL);
            }
        }
        let _ = sshd.wait();
    }

    /// Starts sshd again on the same port, once it accepts connections (any running one is
    /// killed first).
    pub fn restart_sshd(&mut self) {
        self.kill_sshd();
        fs::create_dir_all("/run/sshd").unwrap();
        fs::set_permissions("/run/sshd", fs::Permissions::from_mode(0o755)).unwrap();
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("sshd.log"))
            .unwrap();
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(&self.sshd_config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .process_group(0)
            .spawn()
            .expect("sshd");
        self.sshd = Some(child);
        let address = SocketAddr::from(([127, 0, 0, 1], self.port));
        let start = Instant::now();
        loop {
            if TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok() {
                return;
            }
            if let Some(Ok(Some(status))) = self.sshd.as_mut().map(Child::try_wait) {
                panic!(
                    "sshd exited ({status}) before it listened on port {}: {}",
                    self.port,
                    self.sshd_log()
                );
            }
            assert!(
                start.elapsed() < LISTEN_LIMIT,
                "sshd did not listen on port {} within {LISTEN_LIMIT:?}: {}",
                self.port,
                self.sshd_log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for SshRemote {
    fn drop(&mut self) {
        self.kill_sshd();
        // Whatever the user still runs (a detached worker, a follow left behind).
        for pid in processes_of(self.uid) {
            // SAFETY: signalling processes of the bench's own user.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
        }
        let _turn = USERS.lock().unwrap_or_else(|e| e.into_inner());
        let _ = Command::new("userdel")
            .args(["-r", "-f"])
            .arg(&self.user)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// Eight hex digits no other bench of this machine is likely to have: the time and our pid.
fn random_tag() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let count = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mixed = (nanos as u64) ^ (u64::from(std::process::id()) << 20) ^ (u64::from(count) << 40);
    format!(
        "{:08x}",
        (mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32
    )
}

/// `useradd -m -s /bin/sh` with `*` as its password (no password, yet not locked: sshd
/// without PAM refuses a locked account, `!`, even for a key), retried while another
/// process holds `/etc/passwd`'s lock.
fn add_user(user: &str) {
    let _turn = USERS.lock().unwrap_or_else(|e| e.into_inner());
    let mut last = String::new();
    for _ in 0..20 {
        let out = Command::new("useradd")
            .args(["-m", "-s", "/bin/sh", "-p", "*", user])
            .output()
            .expect("useradd");
        if out.status.success() {
            return;
        }
        last = String::from_utf8_lossy(&out.stderr).into_owned();
        std::thread::sleep(Duration::from_millis(250));
    }
    panic!("useradd {user} failed: {last}");
}

fn id_of(user: &str, which: &str) -> u32 {
    let out = run_ok(Command::new("id").args([which, user]), "id");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

fn run_ok(command: &mut Command, what: &str) -> Output {
    let out = command.stdin(Stdio::null()).output().expect(what);
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A port on 127.0.0.1 nothing listens on now (the kernel's pick, released for sshd).
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Every process as (pid, parent pid, real uid), from `/proc`.
fn process_table() -> Vec<(u32, u32, u32)> {
    let mut table = Vec::new();
    let Ok(entries) = fs::read_dir("/proc") else {
        return table;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(status) = fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|n| n.parse::<u32>().ok())
        };
        if let (Some(ppid), Some(uid)) = (field("PPid:"), field("Uid:")) {
            table.push((pid, ppid, uid));
        }
    }
    table
}

/// Every descendant of `root`.
fn descendants(root: u32) -> Vec<u32> {
    let table = process_table();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            table
                .iter()
                .filter(|(_, ppid, _)| *ppid == parent)
                .map(|(pid, _, _)| *pid),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// Every process running as `uid`.
fn processes_of(uid: u32) -> Vec<u32> {
    process_table()
        .into_iter()
        .filter(|(_, _, u)| *u == uid)
        .map(|(pid, _, _)| pid)
        .collect()
}

/// Writes `text` as the remote user's file `relative` (under its home), its folders made
/// and owned by the user.
pub fn write_as_remote(remote: &SshRemote, relative: &str, text: &str) {
    let path = remote.home.join(relative);
    let mut made = Vec::new();
    let mut dir = path.parent().unwrap().to_path_buf();
    while !dir.exists() {
        made.push(dir.clone());
        dir = dir.parent().unwrap().to_path_buf();
    }
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut file = fs::File::create(&path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
    made.push(path);
    for made in made {
        std::os::unix::fs::chown(&made, Some(remote.uid), Some(remote.gid)).unwrap();
    }
}
