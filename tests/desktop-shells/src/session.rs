//! A desktop session of its own for one test: a temporary `HOME` (and XDG folders, a
//! `XDG_RUNTIME_DIR` of mode 0700), a private system bus (allow-all, so a shell never reaches
//! the machine's own services) and a private session bus, a D-Bus connection of the test's
//! on that session bus, and the processes the test starts, each in a process group of its
//! own that is killed when the session is dropped, whatever happens. Logs and screenshots go
//! to `target/e2e-shots/<suite>/<test>/` (kept as the test's artefacts).

use std::ffi::OsStr;
use std::future::Future;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fabric_fake::FakeFabric;

// The skip-or-fail rule (`$FABRIC_REQUIRE_DESKTOP_TESTS`) and the waits are the ones every
// desktop suite uses.
pub use test_support::desktop::{REQUIRE, cannot_run, require};
pub use test_support::wait::wait_until;

/// How long a shell, a window or an answer may take to appear.
pub const WAIT: Duration = Duration::from_secs(60);

/// The allow-all configuration of the private system bus.
const SYSTEM_BUS_CONFIG: &str = r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:tmpdir=/tmp</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
"#;

/// One process group started by the test.
struct Group {
    name: String,
    child: Child,
}

pub struct Session {
    dir: tempfile::TempDir,
    /// Where this test's logs and screenshots go.
    pub artefacts: PathBuf,
    pub session_bus: String,
    pub system_bus: String,
    /// `WAYLAND_DISPLAY` once a compositor runs.
    pub wayland_display: Option<String>,
    /// `XDG_CURRENT_DESKTOP` of the session (`GNOME`, `KDE`).
    pub current_desktop: &'static str,
    /// Fabric's stand-in.
    pub fake: FakeFabric,
    groups: Vec<Group>,
    runtime: tokio::runtime::Runtime,
    bus: Option<zbus::Connection>,
}

impl Session {
    /// A session for test `test` of suite `suite`, its two buses running.
    pub fn new(suite: &str, test: &str, current_desktop: &'static str) -> Session {
        Self::with_session_bus_policy(suite, test, current_desktop, None)
    }

    /// [`Session::new`], the session bus with `policy` (a `<policy>` element) added to the
    /// standard session configuration.
    pub fn with_session_bus_policy(
        suite: &str,
        test: &str,
        current_desktop: &'static str,
        policy: Option<&str>,
    ) -> Session {
        let dir = tempfile::Builder::new()
            .prefix("fabric-desktop-")
            .tempdir()
            .unwrap();
        let home = dir.path();
        for folder in [".config", ".cache", ".local/share", "work"] {
            std::fs::create_dir_all(home.join(folder)).unwrap();
        }
        test_support::desktop::runtime_dir(home);
        let artefacts = test_support::desktop::artefacts_path(suite, test);
        let _ = std::fs::remove_dir_all(&artefacts);
        std::fs::create_dir_all(&artefacts).unwrap();
        let fake = FakeFabric::new(home);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut session = Session {
            dir,
            artefacts,
            session_bus: String::new(),
            system_bus: String::new(),
            wayland_display: None,
            current_desktop,
            fake,
            groups: Vec::new(),
            runtime,
            bus: None,
        };
        let config = session.home().join("system-bus.conf");
        std::fs::write(&config, SYSTEM_BUS_CONFIG).unwrap();
        let mut system = Command::new("dbus-daemon");
        system
            .arg(format!("--config-file={}", config.display()))
            .args(["--nofork", "--print-address"]);
        session.system_bus = session.start_bus("system-bus", system);
        // The session bus finds its services (dconf, GNOME's notification daemon, …) in the
        // standard folders, ours first (XDG_DATA_HOME), and starts them with the session's
        // environment (dconf-service must share the shell's runtime folder and config).
        let mut user = session.command("dbus-daemon");
        match policy {
            None => {
                user.arg("--session");
            }
            Some(policy) => {
                let config = session.home().join("session-bus.conf");
                std::fs::write(
                    &config,
                    format!(
                        "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n<busconfig>\n  <include>/usr/share/dbus-1/session.conf</include>\n  {policy}\n</busconfig>\n"
                    ),
                )
                .unwrap();
                user.arg(format!("--config-file={}", config.display()));
            }
        }
        user.args(["--nofork", "--print-address"])
            .env_remove("DBUS_SESSION_BUS_ADDRESS");
        session.session_bus = session.start_bus("session-bus", user);
        let address = session.session_bus.clone();
        session.bus = Some(session.block_on(async move {
            zbus::connection::Builder::address(address.as_str())
                .build()
                .await
                .expect("a connection to the private session bus")
        }));
        session
    }

    fn start_bus(&mut self, name: &str, mut command: Command) -> String {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(self.log_file(name))
            .process_group(0);
        let mut child = command.spawn().expect("dbus-daemon (package dbus)");
        let address = test_support::desktop::bus_address(&mut child, name);
        self.groups.push(Group {
            name: name.into(),
            child,
        });
        address
    }

    pub fn home(&self) -> &Path {
        self.dir.path()
    }
    pub fn runtime_dir(&self) -> PathBuf {
        self.home().join("run")
    }
    pub fn data_dir(&self) -> PathBuf {
        self.home().join(".local/share")
    }
    pub fn config_dir(&self) -> PathBuf {
        self.home().join(".config")
    }
    pub fn cache_dir(&self) -> PathBuf {
        self.home().join(".cache/fabric-companion")
    }
    pub fn sessions_dir(&self) -> PathBuf {
        self.cache_dir().join("sessions")
    }
    pub fn fabric_dir(&self) -> PathBuf {
        self.data_dir().join("passioncode-fabric")
    }

    /// The test's connection to the session bus.
    pub fn bus(&self) -> &zbus::Connection {
        self.bus.as_ref().unwrap()
    }

    /// Runs `future` on the session's runtime (where the test's bus connection lives).
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    fn log_file(&self, name: &str) -> std::fs::File {
        std::fs::File::create(self.artefacts.join(format!("{name}.log"))).unwrap()
    }

    /// A command with this session's environment only.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new(program);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("LANG", "C.UTF-8")
            .env("HOME", self.home())
            .env("USER", "root")
            .env("XDG_CACHE_HOME", self.home().join(".cache"))
            .env("XDG_CONFIG_HOME", self.config_dir())
            .env("XDG_DATA_HOME", self.data_dir())
            .env("XDG_RUNTIME_DIR", self.runtime_dir())
            .env("XDG_SESSION_TYPE", "wayland")
            .env("XDG_CURRENT_DESKTOP", self.current_desktop)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.session_bus)
            .env("DBUS_SYSTEM_BUS_ADDRESS", &self.system_bus)
            .current_dir(self.home())
            .stdin(Stdio::null());
        if let Some(display) = &self.wayland_display {
            command.env("WAYLAND_DISPLAY", display);
        }
        for (key, value) in self.fake.env() {
            command.env(key, value);
        }
        command
    }

    /// Starts `command` in a process group of its own (killed on drop), its output in
    /// `<name>.log`; its pid.
    pub fn spawn(&mut self, name: &str, mut command: Command) -> u32 {
        let log = self.log_file(name);
        command
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0);
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        let pid = child.id();
        self.groups.push(Group {
            name: name.into(),
            child,
        });
        pid
    }

    /// Ends the process group started as `pid` now (SIGKILL) and reaps its leader.
    pub fn kill(&mut self, pid: u32) {
        if let Some(index) = self.groups.iter().position(|g| g.child.id() == pid) {
            let mut group = self.groups.remove(index);
            kill_group(&mut group.child);
        }
    }

    /// Ends the process group started as `pid` with SIGTERM, waits up to `limit` for its
    /// leader to exit, then kills the group; whether it ended by itself.
    pub fn terminate(&mut self, pid: u32, limit: Duration) -> bool {
        let Some(index) = self.groups.iter().position(|g| g.child.id() == pid) else {
            return true;
        };
        let mut group = self.groups.remove(index);
        // SAFETY: a signal to a process group we started.
        unsafe {
            libc::kill(-(pid as libc::pid_t), libc::SIGTERM);
        }
        let start = Instant::now();
        let ended = loop {
            if let Ok(Some(_)) = group.child.try_wait() {
                break true;
            }
            if start.elapsed() > limit {
                break false;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        kill_group(&mut group.child);
        ended
    }

    /// Whether the leader started as `pid` is still running.
    pub fn running(&mut self, pid: u32) -> bool {
        self.groups
            .iter_mut()
            .find(|g| g.child.id() == pid)
            .is_some_and(|g| matches!(g.child.try_wait(), Ok(None)))
    }

    /// The names of the groups still running (for a test's failure message).
    pub fn started(&self) -> Vec<String> {
        self.groups.iter().map(|g| g.name.clone()).collect()
    }

    /// Who owns `name` on the session bus.
    pub fn name_owner(&self, name: &str) -> Option<String> {
        let bus = self.bus().clone();
        let name = name.to_string();
        self.block_on(async move {
            let dbus = zbus::fdo::DBusProxy::new(&bus).await.ok()?;
            let name = zbus::names::BusName::try_from(name.as_str()).ok()?;
            dbus.get_name_owner(name).await.ok().map(|o| o.to_string())
        })
    }

    /// Fabric running with session hooks, `fabric` registered for Claude Code and our hooks
    /// installed in it, so the real hooks record sessions and the tray shows Fabric running;
    /// the "Fabric" process is a `sleep` of the session.
    pub fn wire_claude_and_fabric(&mut self) {
        std::fs::write(
            self.home().join(".claude.json"),
            r#"{"mcpServers": {"fabric": {"command": "fabric-mcp", "args": ["--runner", "claude-code"]}}}"#,
        )
        .unwrap();
        // Our hooks installed as a person does: the dry run, then the apply naming its digest.
        let program = crate::programs::fabric_session();
        let plan = self
            .command(&program)
            .args(["install-host-hooks", "--host", "claude", "--json"])
            .output()
            .unwrap();
        assert!(plan.status.success(), "{plan:?}");
        let plan: serde_json::Value = serde_json::from_slice(&plan.stdout).unwrap();
        let digest = plan["digest"].as_str().unwrap().to_string();
        let apply = self
            .command(&program)
            .args([
                "install-host-hooks",
                "--host",
                "claude",
                "--apply",
                "--expect-sha256",
            ])
            .arg(&digest)
            .output()
            .unwrap();
        assert!(apply.status.success(), "{apply:?}");
        let mut sleeper = self.command("sleep");
        sleeper.arg("100000");
        let fabric = self.spawn("fabric", sleeper);
        self.fake.set_unread(0);
        fabric_fake::write_hub(&self.fabric_dir(), &["session-hooks/1"], fabric).unwrap();
    }

    /// A host session in the making: a script that runs the real session-start hook for
    /// `session` in `project` (made under `~/work`), then becomes the long-lived "host"
    /// (`exec sleep`): run it in a terminal, and the hook records what a real host in that
    /// terminal would (its pid, its terminal's ids).
    pub fn host_script(&self, session: &str, project: &str) -> PathBuf {
        let project = self.home().join("work").join(project);
        std::fs::create_dir_all(&project).unwrap();
        let payload = self.home().join(format!("payload-{session}.json"));
        std::fs::write(
            &payload,
            serde_json::json!({
                "session_id": session,
                "transcript_path": self.home().join("t.jsonl"),
                "cwd": project,
                "hook_event_name": "SessionStart",
                "source": "startup",
            })
            .to_string(),
        )
        .unwrap();
        let script = self.home().join(format!("host-{session}.sh"));
        std::fs::write(
            &script,
            format!(
                "cd '{}' && '{}' hook session-start --host claude < '{}' > /dev/null\nexec sleep 100000\n",
                project.display(),
                crate::programs::fabric_session().display(),
                payload.display()
            ),
        )
        .unwrap();
        script
    }

    /// Waits for the session's record (the hook ran) and gives its host pid.
    pub fn recorded_host(&self, session: &str) -> companion_sessions::spool::SessionRecord {
        let spool = companion_sessions::spool::Spool::new(
            &self.sessions_dir(),
            &companion_sessions::spool::SessionId::new(session).unwrap(),
        );
        wait_until(&format!("session {session} recorded"), WAIT, || {
            spool.read_session()
        })
    }

    /// Starts the real `fabric-tray` with `settings` (`settings.json`), the dashboard played
    /// by a stand-in that records each start (see [`Session::dashboard_starts`]); its pid.
    pub fn start_tray(&mut self, name: &str, settings: &str) -> u32 {
        std::fs::create_dir_all(self.config_dir().join("fabric-companion")).unwrap();
        std::fs::write(
            self.config_dir().join("fabric-companion/settings.json"),
            settings,
        )
        .unwrap();
        let stand_in = self.home().join("dashboard-stand-in");
        if !stand_in.exists() {
            std::fs::write(
                &stand_in,
                format!(
                    "#!/bin/sh\necho \"$$ $*\" >> '{}'\nexec sleep 100000\n",
                    self.home().join("dashboard.started").display()
                ),
            )
            .unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let mut tray = self.command(crate::programs::fabric_tray());
        tray.env("FABRIC_COMPANION_BIN", &stand_in)
            .env("FABRIC_SESSION_BIN", crate::programs::fabric_session())
            .env(
                "FABRIC_TRAY_LOG",
                "info,rmcp=warn,notify=warn,fabric_tray=debug,session_focus=debug",
            );
        self.spawn(name, tray)
    }

    /// The dashboard stand-in's starts so far: `(pid, arguments)` each. The stand-ins are
    /// ended when the session is dropped (they run in the tray's detached sessions: their
    /// pids are killed one by one).
    pub fn dashboard_starts(&self) -> Vec<(u32, String)> {
        std::fs::read_to_string(self.home().join("dashboard.started"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| {
                let (pid, args) = line.split_once(' ').unwrap_or((line, ""));
                Some((pid.parse().ok()?, args.to_string()))
            })
            .collect()
    }

    /// Records a board reading for `session`, as the worker does; the moment it was written
    /// (microseconds since the epoch, the clock GNOME Shell's probe reads too).
    pub fn write_board(&self, session: &str, unread: u64) -> i64 {
        let spool = companion_sessions::spool::Spool::new(
            &self.sessions_dir(),
            &companion_sessions::spool::SessionId::new(session).unwrap(),
        );
        let record = companion_sessions::spool::BoardRecord::observed_now(
            unread,
            companion_sessions::board::BoardState::Ready,
        );
        let written = spool.record_board(&record, false).unwrap();
        assert_eq!(
            written,
            companion_sessions::spool::BoardWrite::Written,
            "board of {session}"
        );
        now_micros()
    }

    /// `fabric-session focus <session>`: exit status, stdout, stderr.
    pub fn focus(&self, session: &str) -> (Option<i32>, String, String) {
        let out = self
            .command(crate::programs::fabric_session())
            .args(["focus", session])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// A screenshot's pixels, RGB, row by row.
pub struct Picture {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Picture {
    pub fn px(&self, x: u32, y: u32) -> [u8; 3] {
        let i = ((y * self.width + x) * 3) as usize;
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// How many pixels of the area `(x, y, w, h)` satisfy `test`.
    pub fn count(
        &self,
        (x, y, w, h): (u32, u32, u32, u32),
        test: impl Fn([u8; 3]) -> bool,
    ) -> usize {
        let mut n = 0;
        for yy in y..(y + h).min(self.height) {
            for xx in x..(x + w).min(self.width) {
                if test(self.px(xx, yy)) {
                    n += 1;
                }
            }
        }
        n
    }

    pub fn save(&self, path: &Path) {
        let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
        let mut encoder = png::Encoder::new(file, self.width, self.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&self.rgb).unwrap();
    }

    pub fn load(path: &Path) -> Picture {
        let mut decoder = png::Decoder::new(std::fs::File::open(path).unwrap());
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buf).unwrap();
        let channels = info.color_type.samples();
        let mut rgb = Vec::with_capacity((info.width * info.height * 3) as usize);
        for px in buf[..info.buffer_size()].chunks_exact(channels) {
            match channels {
                1 | 2 => rgb.extend_from_slice(&[px[0], px[0], px[0]]),
                _ => rgb.extend_from_slice(&px[..3]),
            }
        }
        Picture {
            width: info.width,
            height: info.height,
            rgb,
        }
    }
}

/// Microseconds since the epoch (GLib's real time, as GNOME Shell's probe stamps events).
pub fn now_micros() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

fn kill_group(child: &mut Child) {
    // SAFETY: a signal to a process group we started; errors (already gone) ignored.
    unsafe {
        libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Session {
    fn drop(&mut self) {
        // The test's bus connection first, then everything else, last started first.
        self.bus = None;
        for (pid, _) in self.dashboard_starts() {
            // SAFETY: a signal to a stand-in this session's tray started.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
        }
        for mut group in self.groups.drain(..).rev() {
            kill_group(&mut group.child);
        }
    }
}
