//! A dev container as a remote (issue 29 item 5), for real, with each engine this machine
//! runs: Debian's Podman and Debian's Docker (`dockerd`, started by the test on a socket of its
//! own). Each runs a container (an image made here from this machine's own programs, no
//! registry); `fabric-session remote add podman:<name>` / `docker:<name>` sets it up through
//! `podman exec` / `docker exec`; a session run by the real hooks inside reaches the real
//! tray's menu, and a permission request there marks it.
//!
//! Podman is configured for this machine through `CONTAINERS_CONF` and
//! `CONTAINERS_STORAGE_CONF`, as a person's `containers.conf` would: `runc` with `cgroupfs`
//! (this kernel's cgroups are hybrid, which crun refuses), limits the sandbox allows, and a
//! storage folder of the test's own (removed with it). Docker's daemon gets the same: `vfs`
//! storage, `cgroupfs`, no bridge and no iptables rules (the container has no network), its
//! data in the test's folder; `docker` reaches it through `DOCKER_HOST`, as a person's
//! context would.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};

use super::*;

/// The programs the container's image holds (with their libraries): what our remote scripts
/// and the hooks' shell need.
const IMAGE_PROGRAMS: [&str; 14] = [
    "sh",
    "dash",
    "sha256sum",
    "uname",
    "mkdir",
    "cat",
    "chmod",
    "mv",
    "rm",
    "sleep",
    "env",
    "id",
    "ls",
    "dirname",
];

/// A container engine set up for this machine, its state in `dir`.
struct Engine {
    dir: tempfile::TempDir,
    kind: Kind,
}

enum Kind {
    Podman,
    /// The daemon this test started.
    Docker(Child),
}

impl Engine {
    fn podman() -> Engine {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("containers.conf"),
            "[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=4096:4096\"]\n\
             [engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("storage.conf"),
            format!(
                "[storage]\ndriver = \"vfs\"\ngraphroot = \"{0}/graph\"\nrunroot = \"{0}/run\"\n",
                dir.path().display()
            ),
        )
        .unwrap();
        Engine {
            dir,
            kind: Kind::Podman,
        }
    }

    /// Starts `dockerd` on a socket in the test's folder, once it answers.
    fn docker() -> Engine {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let log = std::fs::File::create(d.join("dockerd.log")).unwrap();
        let daemon = Command::new("dockerd")
            .arg("--data-root")
            .arg(d.join("data"))
            .arg("--exec-root")
            .arg(d.join("exec"))
            .arg("--pidfile")
            .arg(d.join("dockerd.pid"))
            .arg("-H")
            .arg(format!("unix://{}", d.join("docker.sock").display()))
            .args([
                "--storage-driver",
                "vfs",
                "--iptables=false",
                "--ip6tables=false",
                "--bridge=none",
                "--exec-opt",
                "native.cgroupdriver=cgroupfs",
            ])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("dockerd (package docker.io)");
        let engine = Engine {
            dir,
            kind: Kind::Docker(daemon),
        };
        wait_until("dockerd answering", WAIT, || {
            engine
                .run(&["version"], None)
                .status
                .success()
                .then_some(())
        });
        engine
    }

    fn program(&self) -> &'static str {
        match self.kind {
            Kind::Podman => "podman",
            Kind::Docker(_) => "docker",
        }
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        let d = self.dir.path();
        match self.kind {
            Kind::Podman => vec![
                (
                    "CONTAINERS_CONF",
                    d.join("containers.conf").display().to_string(),
                ),
                (
                    "CONTAINERS_STORAGE_CONF",
                    d.join("storage.conf").display().to_string(),
                ),
            ],
            Kind::Docker(_) => vec![(
                "DOCKER_HOST",
                format!("unix://{}", d.join("docker.sock").display()),
            )],
        }
    }

    fn run(&self, args: &[&str], input: Option<&[u8]>) -> Output {
        let mut command = Command::new(self.program());
        command.args(args).envs(self.env());
        match input {
            None => command.output().unwrap(),
            Some(bytes) => {
                use std::io::Write;
                let mut child = command
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                child.stdin.take().unwrap().write_all(bytes).unwrap();
                child.wait_with_output().unwrap()
            }
        }
    }

    fn ok(&self, args: &[&str], input: Option<&[u8]>) -> String {
        let out = self.run(args, input);
        assert!(out.status.success(), "{} {args:?}: {out:?}", self.program());
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Removes the container `name` at once.
    fn remove(&self, name: &str) {
        let _ = match self.kind {
            Kind::Podman => self.run(&["rm", "-f", "-t", "0", name], None),
            Kind::Docker(_) => self.run(&["rm", "-f", name], None),
        };
    }
}

impl Drop for Engine {
    /// Docker's daemon is asked to stop (it stops its containerd), then killed if it lingers.
    fn drop(&mut self) {
        if let Kind::Docker(daemon) = &mut self.kind {
            // SAFETY: signalling the daemon this test started.
            unsafe {
                libc::kill(daemon.id() as libc::pid_t, libc::SIGTERM);
            }
            let deadline = Instant::now() + Duration::from_secs(15);
            while daemon.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = daemon.kill();
            let _ = daemon.wait();
        }
    }
}

/// An image of this machine's own programs and the libraries they (and `fabric-session`)
/// load, a root user whose home is `/root`.
fn image_tar(dir: &Path, programs: &[PathBuf]) -> PathBuf {
    let root = dir.join("root");
    for sub in ["bin", "tmp", "root", "etc"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    std::fs::write(root.join("etc/passwd"), "root:x:0:0:root:/root:/bin/sh\n").unwrap();
    let copy = |from: &Path, to: &Path| {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
    };
    for program in programs {
        if program.file_name().is_some_and(|n| n != "fabric-session") {
            copy(
                program,
                &root.join("bin").join(program.file_name().unwrap()),
            );
        }
        let ldd = Command::new("ldd").arg(program).output().unwrap();
        for word in String::from_utf8_lossy(&ldd.stdout).split_whitespace() {
            if word.starts_with('/') {
                let lib = std::fs::canonicalize(word).unwrap();
                copy(&lib, &root.join(word.trim_start_matches('/')));
            }
        }
    }
    let tar = dir.join("image.tar");
    let out = Command::new("tar")
        .arg("-C")
        .arg(&root)
        .arg("-cf")
        .arg(&tar)
        .arg(".")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    tar
}

fn which(program: &str) -> PathBuf {
    let out = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .unwrap();
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

#[test]
fn a_dev_container_s_session_reaches_the_tray() {
    let test = "a_dev_container_s_session_reaches_the_tray";
    if !available(test)
        || !programs_available(test, &["podman", "runc"], "no podman", "podman, runc")
    {
        return;
    }
    a_container_s_session_reaches_the_tray(Engine::podman());
}

#[test]
fn a_docker_container_s_session_reaches_the_tray() {
    let test = "a_docker_container_s_session_reaches_the_tray";
    if !available(test)
        || !programs_available(
            test,
            &["dockerd", "docker", "containerd", "runc"],
            "no docker",
            "docker.io",
        )
    {
        return;
    }
    if !test_support::special_files::running_as_root() {
        test_support::desktop::cannot_run(test, "dockerd needs root");
        return;
    }
    a_container_s_session_reaches_the_tray(Engine::docker());
}

/// The whole proof with one engine: `remote add <engine>:<name>`, a session inside, the menu.
fn a_container_s_session_reaches_the_tray(containers: Engine) {
    let engine = containers.program();
    let name = format!("fabric-dev-{engine}-{}", std::process::id());
    let image = format!("localhost/{name}:test");
    let mut programs: Vec<PathBuf> = IMAGE_PROGRAMS.iter().map(|p| which(p)).collect();
    programs.push(session_binary());
    let tar = image_tar(containers.dir.path(), &programs);
    containers.ok(&["import", tar.to_str().unwrap(), &image], None);
    containers.ok(
        &[
            "run",
            "-d",
            "--name",
            &name,
            "--network",
            "none",
            &image,
            "/bin/sleep",
            "100000",
        ],
        None,
    );
    struct Gone<'a>(&'a Engine, String);
    impl Drop for Gone<'_> {
        fn drop(&mut self) {
            self.0.remove(&self.1);
        }
    }
    let _gone = Gone(&containers, name.clone());

    let mut desktop = Desktop::start_bare(&format!("remote-{engine}"));
    start_watcher(&mut desktop);
    let spec = format!("{engine}:{name}");
    let remote_add = |extra: &[&str]| {
        let mut command = desktop.command(session_binary());
        command
            .args(["remote", "add", &spec])
            .args(extra)
            .envs(containers.env());
        command.output().unwrap()
    };
    // `remote add` over `<engine> exec`: checked, copied, the plan shown; applied with its digest.
    let out = remote_add(&[]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains(&format!("Copied fabric-session to {name} (Linux x86_64")),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "Claude Code on {name}: /root/.claude/settings.json"
        )),
        "{said}"
    );
    let digest = said
        .lines()
        .find_map(|l| l.trim().strip_prefix("Plan digest: "))
        .expect("a digest")
        .to_string();
    let out = remote_add(&["--apply", "--expect-sha256", &digest]);
    assert!(out.status.success(), "{out:?}");
    let hooks = containers.ok(&["exec", &name, "cat", "/root/.claude/settings.json"], None);
    assert!(
        hooks.contains("/root/.local/share/fabric-companion/bin/fabric-session hook"),
        "{hooks}"
    );

    // Fabric "runs" in the container (its pid 1), fabric registered there, a session started.
    let mut hub = fabric_fake::files::Hub::new(1);
    hub.features = vec!["session-hooks/1".into()];
    let hub = hub
        .to_json(Path::new("/root/.local/share/passioncode-fabric"))
        .to_string();
    let put = |path: &str, text: &str| {
        containers.ok(
            &[
                "exec",
                "-i",
                &name,
                "sh",
                "-c",
                &format!("mkdir -p \"$(dirname {path})\" && cat > {path}"),
            ],
            Some(text.as_bytes()),
        );
    };
    put("/root/.local/share/passioncode-fabric/hub.json", &hub);
    put(
        "/root/.claude.json",
        r#"{"mcpServers": {"fabric": {"command": "fabric-mcp"}}}"#,
    );
    let payload = |event: &str, extra: &str| {
        format!(
            r#"{{"session_id":"dev-1","cwd":"/root/api","hook_event_name":"{event}","source":"startup"{extra}}}"#
        )
    };
    put("/root/start.json", &payload("SessionStart", ""));
    put(
        "/root/prompt.json",
        &payload("UserPromptSubmit", r#","prompt":"go""#),
    );
    put(
        "/root/ask.json",
        &payload("PermissionRequest", r#","tool_name":"Bash""#),
    );
    let program = "/root/.local/share/fabric-companion/bin/fabric-session";
    // The session's host process: a shell running a script (as an agent host runs our hook
    // command), which then stays.
    put(
        "/root/host.sh",
        &format!(
            "mkdir -p /root/api && cd /root/api\n{program} hook session-start < /root/start.json\n{program} hook user-prompt-submit < /root/prompt.json\nexec sleep 100000\n"
        ),
    );
    containers.ok(&["exec", "-d", &name, "sh", "/root/host.sh"], None);

    let env: Vec<(&str, String)> = containers.env().into_iter().collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let tray = start_tray_with(
        &mut desktop,
        &format!(r#"{{"watchIntervalSecs": 10, "needsYouGraceSecs": 0, "remotes": ["{spec}"]}}"#),
        &env,
    );
    let client = Client::new(&desktop.bus);
    let item = item_name(&client, tray);
    let line = super::remotes::menu_shows(&client, &item, "the container's session", |l| {
        l.starts_with(&format!("api · Claude Code on {name} · "))
    });
    assert!(line.ends_with("working"), "{line}");
    super::remotes::menu_shows(&client, &item, "the container's link", |l| {
        l == format!("{name}: connected, 1 session")
    });

    containers.ok(
        &[
            "exec",
            &name,
            "sh",
            "-c",
            &format!("{program} hook permission-request < /root/ask.json"),
        ],
        None,
    );
    super::remotes::menu_shows(&client, &item, "needs you from the container", |l| {
        l.starts_with(&format!("api · Claude Code on {name} · needs you"))
    });
    quit_and_wait(&client, &item, tray, &desktop);
}
