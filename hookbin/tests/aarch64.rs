//! The aarch64 build of fabric-session (`scripts/build-hook-binary.sh --aarch64`: the program
//! `remote add` copies to an aarch64 remote), run under qemu-user (`qemu-aarch64-static`,
//! package qemu-user-static) in a temporary HOME: linked as it ships (static, at a fixed
//! address), and answering as this machine's build does on the same input: `--version`, a
//! Claude Code session-start hook with Fabric running, then `status --json` showing the
//! session. And `remote add` end to end to an aarch64 remote: this machine laid out as the
//! package installs it, a loopback `ssh` whose other end says `Linux aarch64`, and that
//! remote's program exec'd through binfmt_misc (qemu-aarch64 registered: scripts/test.sh does
//! it where nothing did). `$FABRIC_AARCH64_BIN` names the program; without it (or without
//! qemu, or binfmt_misc's entry) each test says why it did not run, and fails under
//! `$FABRIC_REQUIRE_DESKTOP_TESTS=1`, as scripts/test.sh runs it (it builds the program and
//! sets the variable). Emulated, never run on real aarch64 hardware here.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

mod common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{Home, claude_context, stdout};
use test_support::desktop::{cannot_run, require};

const QEMU: &str = "qemu-aarch64-static";

/// The aarch64 program, when it and qemu are here (else said by [`cannot_run`]).
fn aarch64_program(test: &str) -> Option<PathBuf> {
    let Some(path) = std::env::var_os("FABRIC_AARCH64_BIN") else {
        cannot_run(
            test,
            "NOT RUN: $FABRIC_AARCH64_BIN does not name the aarch64 build \
             (scripts/build-hook-binary.sh --aarch64 builds it and prints its path)",
        );
        return None;
    };
    let path = PathBuf::from(path);
    assert!(
        path.is_file(),
        "$FABRIC_AARCH64_BIN={} is not a file",
        path.display()
    );
    require(test, &[QEMU], "qemu-user-static").then_some(path)
}

/// Which program runs: the native build (the workspace's) or the aarch64 one under qemu.
#[derive(Clone, Copy, Debug)]
enum Build<'a> {
    Native,
    Aarch64(&'a std::path::Path),
}

impl Build<'_> {
    /// `fabric-session <args>` with `home`'s environment.
    fn command(self, home: &Home, args: &[&str]) -> Command {
        match self {
            Build::Native => home.command(args),
            Build::Aarch64(program) => {
                let mut command = home.program(QEMU);
                command.arg(program).args(args);
                command
            }
        }
    }

    /// Runs it with `input` on stdin.
    fn run(self, home: &Home, args: &[&str], input: &[u8]) -> Output {
        let mut child = self
            .command(home, args)
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{self:?} {args:?}: {e}"));
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_vec();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let out = child.wait_with_output().unwrap();
        let _ = writer.join();
        out
    }
}

/// The little-endian integer of `N` bytes at `at`.
fn le(bytes: &[u8], at: usize, n: usize) -> u64 {
    bytes[at..at + n]
        .iter()
        .rev()
        .fold(0, |v, b| (v << 8) | u64::from(*b))
}

#[test]
fn the_aarch64_program_is_a_static_aarch64_executable_at_a_fixed_address() {
    let Some(program) = aarch64_program("aarch64::static_executable") else {
        return;
    };
    let elf = std::fs::read(&program).unwrap();
    assert_eq!(&elf[..4], b"\x7fELF", "{}", program.display());
    assert_eq!((elf[4], elf[5]), (2, 1), "not 64-bit little-endian");
    assert_eq!(le(&elf, 18, 2), 183, "e_machine is not EM_AARCH64");
    // ET_EXEC, not ET_DYN: relocation-model=static, as the x86_64 program ships.
    assert_eq!(
        le(&elf, 16, 2),
        2,
        "e_type is not ET_EXEC (position-independent?)"
    );
    let (phoff, phentsize, phnum) = (
        le(&elf, 32, 8) as usize,
        le(&elf, 54, 2) as usize,
        le(&elf, 56, 2) as usize,
    );
    assert!(phnum > 0);
    for i in 0..phnum {
        let kind = le(&elf, phoff + i * phentsize, 4);
        // PT_DYNAMIC (2) and PT_INTERP (3): a dynamic loader would be needed.
        assert!(
            kind != 2 && kind != 3,
            "program header {i} is of type {kind}: not statically linked"
        );
    }
}

#[test]
fn version_under_qemu_is_the_native_program_s() {
    let Some(program) = aarch64_program("aarch64::version") else {
        return;
    };
    let home = Home::new();
    let native = Build::Native.run(&home, &["--version"], b"");
    let arm = Build::Aarch64(&program).run(&home, &["--version"], b"");
    assert!(native.status.success() && arm.status.success(), "{arm:?}");
    assert!(stdout(&arm).starts_with("fabric-session "), "{arm:?}");
    assert_eq!(stdout(&arm), stdout(&native));
    assert!(arm.stderr.is_empty(), "{arm:?}");
}

/// `value` with each time (`startedAt`, `stateSince`: UTC, RFC 3339) written `<time>`: the two
/// runs are moments apart.
fn without_times(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if key == "startedAt" || key == "stateSince" {
                    let time = field.as_str().unwrap_or_default();
                    assert!(
                        time.len() >= 20 && time.as_bytes()[10] == b'T' && time.ends_with('Z'),
                        "{key}: {field}"
                    );
                    *field = "<time>".into();
                } else {
                    without_times(field);
                }
            }
        }
        serde_json::Value::Array(list) => list.iter_mut().for_each(without_times),
        _ => {}
    }
}

/// What one build did in a fresh home: the hook's answer, its log line and `status --json`,
/// with the home's path written `$HOME`.
struct Seen {
    hook: String,
    log: String,
    status: serde_json::Value,
}

fn session_start_then_status(build: Build) -> Seen {
    let home = Home::new();
    home.register("claude");
    home.fabric_running(&["session-hooks/1"]);
    let here = home.path().to_str().unwrap().to_string();
    let out = build.run(
        &home,
        &["hook", "session-start", "--host", "claude"],
        &home.payload("arm-1", "SessionStart"),
    );
    assert!(out.status.success(), "{build:?}: {out:?}");
    assert!(out.stderr.is_empty(), "{build:?}: {out:?}");
    let context = claude_context(&out, "SessionStart");
    assert!(
        context.starts_with("Fabric is running"),
        "{build:?}: {context}"
    );
    assert!(
        home.spool("arm-1").join("session.json").is_file(),
        "{build:?}"
    );
    let status = build.run(&home, &["status", "--json"], b"");
    assert!(status.status.success(), "{build:?}: {status:?}");
    let mut status: serde_json::Value =
        serde_json::from_str(&stdout(&status).replace(&here, "$HOME")).unwrap();
    let sessions = status["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{build:?}: {status}");
    assert_eq!(sessions[0]["id"], "arm-1");
    assert_eq!(sessions[0]["host"], "claude");
    assert_eq!(sessions[0]["project"], "my-project");
    without_times(&mut status);
    // The log line without its time (its first word).
    let log = home.log_text();
    let log = log
        .trim_end()
        .split_once(' ')
        .map(|(_, rest)| rest.to_string());
    Seen {
        hook: stdout(&out).replace(&here, "$HOME"),
        log: log.unwrap_or_default(),
        status,
    }
}

#[test]
fn a_session_start_hook_and_status_under_qemu_answer_as_the_native_program_does() {
    let Some(program) = aarch64_program("aarch64::hook_and_status") else {
        return;
    };
    let native = session_start_then_status(Build::Native);
    let arm = session_start_then_status(Build::Aarch64(&program));
    assert_eq!(arm.hook, native.hook);
    assert!(
        arm.log.contains("session-start claude arm-1 ok"),
        "{}",
        arm.log
    );
    assert_eq!(arm.log, native.log);
    assert_eq!(arm.status, native.status);
}

/// Whether the kernel runs aarch64 programs through qemu when they are exec'd (binfmt_misc:
/// Debian's qemu-user-static registers `qemu-aarch64` at boot through systemd-binfmt;
/// scripts/test.sh registers it where nothing did).
fn aarch64_runs_when_execed(test: &str) -> bool {
    let entry =
        std::fs::read_to_string("/proc/sys/fs/binfmt_misc/qemu-aarch64").unwrap_or_default();
    entry.lines().next() == Some("enabled")
        || cannot_run(
            test,
            "NOT RUN: binfmt_misc has no enabled qemu-aarch64 entry (as root: mount -t binfmt_misc \
             binfmt_misc /proc/sys/fs/binfmt_misc; cat /usr/lib/binfmt.d/qemu-aarch64.conf > \
             /proc/sys/fs/binfmt_misc/register)",
        )
}

#[test]
fn remote_add_sets_an_aarch64_remote_up_with_the_package_s_aarch64_program() {
    let test = "aarch64::remote_add";
    let Some(arm) = aarch64_program(test) else {
        return;
    };
    if !aarch64_runs_when_execed(test) {
        return;
    }
    // This machine laid out as the package installs it: the native program in usr/bin, the
    // aarch64 one in usr/lib/fabric-companion (off PATH).
    let root = tempfile::tempdir().unwrap();
    let bin = root.path().join("usr/bin/fabric-session");
    let lib = root
        .path()
        .join("usr/lib/fabric-companion/fabric-session-aarch64");
    for (from, to) in [(Path::new(common::BIN), &bin), (arm.as_path(), &lib)] {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, to).unwrap();
    }
    // The remote: a home of its own, reached by a loopback `ssh` ($FABRIC_SSH) that runs the
    // fixed remote command here, where `uname` says aarch64. Its programs then run under qemu
    // through binfmt_misc, exec'd as on an aarch64 machine.
    let remote_home = root.path().join("remote-home");
    let fake_bin = root.path().join("remote-bin");
    std::fs::create_dir_all(&remote_home).unwrap();
    common::write(
        &fake_bin.join("uname"),
        "#!/bin/sh\necho \"Linux aarch64\"\n",
    );
    let ssh = root.path().join("ssh");
    common::write(
        &ssh,
        &format!(
            "#!/bin/sh\n# ssh [options] -- <destination> <command>: the command, run here\n\
             while [ \"$1\" != -- ]; do shift; done; shift 2\n\
             exec env -i HOME='{}' PATH='{}:/usr/bin:/bin' sh -c \"$*\"\n",
            remote_home.display(),
            fake_bin.display()
        ),
    );
    for script in [&ssh, &fake_bin.join("uname")] {
        std::fs::set_permissions(script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let home = Home::new();
    let remote = |args: &[&str]| {
        home.program(&bin)
            .arg("remote")
            .args(args)
            .env("FABRIC_SSH", &ssh)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let said = |out: &Output| format!("{}\n{}", stdout(out), String::from_utf8_lossy(&out.stderr));

    // Without consent: the aarch64 program copied and checked, the remote's plan shown.
    let out = remote(&["add", "arm-box"]);
    assert!(out.status.success(), "{}", said(&out));
    let want = {
        use sha2::Digest;
        sha2::Sha256::digest(std::fs::read(&arm).unwrap())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "Copied fabric-session to arm-box (Linux aarch64, sha256 {want})."
        )),
        "{text}"
    );
    let copy = remote_home.join(".local/share/fabric-companion/bin/fabric-session");
    assert_eq!(std::fs::read(&copy).unwrap(), std::fs::read(&arm).unwrap());
    let digest = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("Plan digest: "))
        .unwrap_or_else(|| panic!("no plan digest: {text}"))
        .to_string();
    let settings = remote_home.join(".claude/settings.json");
    assert!(!settings.exists(), "written without consent");

    // Applied with the digest: the remote's aarch64 program wrote its hooks there.
    let out = remote(&[
        "add",
        "arm-box",
        "--host",
        "claude",
        "--apply",
        "--expect-sha256",
        &digest,
    ]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(
        stdout(&out).contains("Applied: Claude Code's hooks on arm-box are ours now."),
        "{}",
        said(&out)
    );
    let written = std::fs::read_to_string(&settings).unwrap();
    assert!(
        written.contains(&format!("{} hook session-start", copy.display())),
        "{written}"
    );

    // Taken off again: hooks and program.
    let out = remote(&["remove", "arm-box", "--apply"]);
    assert!(out.status.success(), "{}", said(&out));
    assert!(!copy.exists(), "{}", said(&out));
    assert!(
        !std::fs::read_to_string(&settings)
            .unwrap_or_default()
            .contains("fabric-session"),
        "{}",
        said(&out)
    );
}
