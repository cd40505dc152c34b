//! Wine, the Windows programs, the prefix template of this run and each test's prefix.
//!
//! The template is made once per test process (`wineboot -i`, about 15 s on 2 cores) in
//! `$TMPDIR/wine-bench-<pid>`, removed when the process exits (and, should a run be killed,
//! by the next run). Each test copies it into a prefix of its own: files are copied, except
//! the large folders of Wine's own DLLs, which nothing writes, hard-linked (a full copy is
//! 700 MB). Every prefix has its own `wineserver`, ended when the prefix is dropped.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{run_watched, skip};

/// Debian's 64-bit Wine loader (the `wine` wrapper wants 32-bit Wine).
pub const WINE: &str = "/usr/lib/wine/wine64";
/// Its server, which `-k` ends and `-w` waits for.
pub const WINESERVER: &str = "/usr/lib/wine/wineserver";
/// The mingw compiler the `ProcessPrng` shim is built with.
pub const MINGW_GCC: &str = "x86_64-w64-mingw32-gcc";
/// Where the Windows builds are when `FABRIC_WINE_BIN_DIR` does not say.
const DEFAULT_BIN_DIR: &str = "target/windows/x86_64-pc-windows-gnu/debug";
/// Programs every test needs.
const PROGRAMS: [&str; 3] = ["fabric-session", "fabric-fake", "host-stand-in"];
/// Folders of the template hard-linked into each prefix: Wine's DLLs, never written.
const LINKED: [&str; 3] = [
    "drive_c/windows/system32",
    "drive_c/windows/syswow64",
    "drive_c/windows/winsxs",
];
/// What the shim is built from.
const SHIM_SOURCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/shim/bcryptprimitives.c");

/// Wine, the Windows programs and this run's prefix template.
#[derive(Debug)]
pub struct Bench {
    /// The folder of the Windows builds.
    pub bin_dir: PathBuf,
    /// This run's folder: the template, the test prefixes.
    root: PathBuf,
    /// The template prefix.
    template: PathBuf,
    /// The Windows user name (Wine takes the Unix one): `C:\users\<user>`.
    pub user: String,
}

static BENCH: OnceLock<Result<Bench, String>> = OnceLock::new();
static ROOT: OnceLock<PathBuf> = OnceLock::new();

/// The bench, or `None` (said on stderr) when it cannot run here; with
/// `FABRIC_REQUIRE_DESKTOP_TESTS=1` a missing part panics instead.
pub fn bench(test: &str) -> Option<&'static Bench> {
    match BENCH.get_or_init(Bench::set_up) {
        Ok(bench) => Some(bench),
        Err(why) => {
            skip(test, why);
            None
        }
    }
}

impl Bench {
    fn set_up() -> Result<Bench, String> {
        for tool in [WINE, WINESERVER] {
            if !Path::new(tool).is_file() {
                return Err(format!("{tool} is missing (package wine64)"));
            }
        }
        if !on_path(MINGW_GCC) {
            return Err(format!(
                "{MINGW_GCC} is missing (package gcc-mingw-w64-x86-64)"
            ));
        }
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let bin_dir = std::env::var_os("FABRIC_WINE_BIN_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace.join(DEFAULT_BIN_DIR));
        for program in PROGRAMS {
            let exe = bin_dir.join(format!("{program}.exe"));
            if !exe.is_file() {
                return Err(format!(
                    "{} is missing: build the Windows programs with scripts/build-windows.sh",
                    exe.display()
                ));
            }
        }
        let root = std::env::temp_dir().join(format!("wine-bench-{}", std::process::id()));
        remove_stale_roots();
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("home")).map_err(|e| e.to_string())?;
        ROOT.set(root.clone()).expect("one bench per process");
        // SAFETY: registering a plain extern "C" function with no captured state.
        unsafe { libc::atexit(remove_root) };
        let template = root.join("template");
        let boot = Command::new(WINE)
            .arg("wineboot")
            .arg("-i")
            .env_clear()
            .envs(base_env(&template, &root.join("home")))
            .output()
            .map_err(|e| format!("cannot run wineboot: {e}"))?;
        let _ = Command::new(WINESERVER)
            .arg("-w")
            .env("WINEPREFIX", &template)
            .status();
        if !template.join("drive_c/windows/system32").is_dir() {
            return Err(format!(
                "wineboot made no prefix: {}",
                String::from_utf8_lossy(&boot.stderr)
            ));
        }
        let shim = template.join("drive_c/windows/system32/bcryptprimitives.dll");
        let built = Command::new(MINGW_GCC)
            .args(["-shared", "-O2", "-o"])
            .arg(&shim)
            .arg(SHIM_SOURCE)
            .args(["-ladvapi32", "-Wl,--kill-at"])
            .output()
            .map_err(|e| format!("cannot run {MINGW_GCC}: {e}"))?;
        if !built.status.success() {
            return Err(format!(
                "the ProcessPrng shim did not build: {}",
                String::from_utf8_lossy(&built.stderr)
            ));
        }
        let user = std::fs::read_dir(template.join("drive_c/users"))
            .map_err(|e| e.to_string())?
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .find(|name| name != "Public")
            .ok_or("the prefix has no user folder")?;
        Ok(Bench {
            bin_dir,
            root,
            template,
            user,
        })
    }

    /// The Windows build of `program` (`fabric-tray` → `…/fabric-tray.exe`); panics when it
    /// is missing.
    pub fn exe(&self, program: &str) -> PathBuf {
        let exe = self.bin_dir.join(format!("{program}.exe"));
        assert!(
            exe.is_file(),
            "{} is missing: build the Windows programs with scripts/build-windows.sh",
            exe.display()
        );
        exe
    }
}

extern "C" fn remove_root() {
    if let Some(root) = ROOT.get() {
        kill_servers_under(root);
        let _ = std::fs::remove_dir_all(root);
    }
}

/// Ends the wineservers of every prefix under `root` (a prefix's server is ended by its
/// `Drop`; this catches what a panicking test left).
fn kill_servers_under(root: &Path) {
    let prefixes = root.join("prefixes");
    let Ok(entries) = std::fs::read_dir(&prefixes) else {
        return;
    };
    for entry in entries.flatten() {
        let _ = Command::new(WINESERVER)
            .arg("-k")
            .env("WINEPREFIX", entry.path())
            .output();
    }
}

/// Removes the folders of earlier runs whose process is gone.
fn remove_stale_roots() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("wine-bench-")
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            kill_servers_under(&entry.path());
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// The environment every Wine process of a prefix gets: nothing of the test runner's own
/// (a Windows program reads `CODEX_HOME`, `FABRIC_MCP`, …).
fn base_env(prefix: &Path, home: &Path) -> Vec<(String, String)> {
    vec![
        ("PATH".into(), "/usr/bin:/bin".into()),
        ("HOME".into(), home.display().to_string()),
        (
            "USER".into(),
            std::env::var("USER").unwrap_or_else(|_| "root".into()),
        ),
        ("LANG".into(), "C.UTF-8".into()),
        ("WINEPREFIX".into(), prefix.display().to_string()),
        ("WINEDEBUG".into(), "-all".into()),
        // No Mono or Gecko installer prompts.
        ("WINEDLLOVERRIDES".into(), "mscoree,mshtml=".into()),
    ]
}

/// One test's Wine prefix.
#[derive(Debug)]
pub struct Prefix {
    bench: &'static Bench,
    /// The prefix folder (`WINEPREFIX`).
    pub dir: PathBuf,
    /// The Unix `HOME` its Wine processes get.
    pub home: PathBuf,
    /// `DISPLAY` for its processes, when the test gave one.
    display: Option<String>,
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

impl Prefix {
    /// A fresh prefix copied from this run's template.
    pub fn new(bench: &'static Bench, name: &str) -> Prefix {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let base = bench.root.join("prefixes").join(format!("{name}-{n}"));
        let dir = base.join("prefix");
        copy_tree(&bench.template, &dir, Path::new(""))
            .unwrap_or_else(|e| panic!("copying the template prefix: {e}"));
        let home = base.join("home");
        std::fs::create_dir_all(&home).expect("a home");
        Prefix {
            bench,
            dir,
            home,
            display: None,
        }
    }

    /// Wine processes started from now on get this `DISPLAY`.
    pub fn set_display(&mut self, display: &str) {
        self.display = Some(display.to_owned());
    }

    /// The bench this prefix belongs to.
    pub fn bench(&self) -> &'static Bench {
        self.bench
    }

    /// `wine64 <program>` in this prefix, with a clean environment.
    pub fn wine(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new(WINE);
        command
            .arg(program)
            .env_clear()
            .envs(base_env(&self.dir, &self.home))
            .current_dir(&self.home);
        if let Some(display) = &self.display {
            command.env("DISPLAY", display);
        }
        command
    }

    /// `wine64 <our program>.exe <args>`.
    pub fn program(&self, program: &str, args: &[&str]) -> Command {
        let mut command = self.wine(self.bench.exe(program));
        command.args(args);
        command
    }

    /// Runs a Windows program file to its end under the watchdog.
    pub fn run_exe(
        &self,
        exe: &Path,
        args: &[&str],
        env: &[(String, String)],
        stdin: &[u8],
    ) -> Output {
        let mut command = self.wine(exe);
        command.args(args).envs(env.iter().map(|(k, v)| (k, v)));
        run_watched(
            command,
            stdin,
            &format!("{} {}", exe.display(), args.join(" ")),
        )
    }

    /// Runs one of our programs to its end under the watchdog.
    pub fn run(
        &self,
        program: &str,
        args: &[&str],
        env: &[(String, String)],
        stdin: &[u8],
    ) -> Output {
        let mut command = self.program(program, args);
        command.envs(env.iter().map(|(k, v)| (k, v)));
        run_watched(command, stdin, &format!("{program} {}", args.join(" ")))
    }

    /// The person's profile folder, `C:\users\<user>`, as a Unix path.
    pub fn profile(&self) -> PathBuf {
        self.dir.join("drive_c/users").join(&self.bench.user)
    }

    /// `%LOCALAPPDATA%`.
    pub fn local_appdata(&self) -> PathBuf {
        self.profile().join("AppData/Local")
    }

    /// `%APPDATA%`.
    pub fn appdata(&self) -> PathBuf {
        self.profile().join("AppData/Roaming")
    }

    /// Fabric's folder, `%LOCALAPPDATA%\passioncode-fabric`.
    pub fn fabric_dir(&self) -> PathBuf {
        self.local_appdata().join("passioncode-fabric")
    }

    /// Our cache and data folder, `%LOCALAPPDATA%\fabric-companion`.
    pub fn cache_dir(&self) -> PathBuf {
        self.local_appdata().join("fabric-companion")
    }

    /// The hook log.
    pub fn log_path(&self) -> PathBuf {
        self.cache_dir().join("hooks.log")
    }

    /// A session's spool.
    pub fn spool(&self, session: &str) -> PathBuf {
        self.cache_dir().join("sessions").join(session)
    }

    /// The Windows spelling of a Unix path: inside the prefix's `drive_c` on `C:`, anything
    /// else through Wine's `Z:` (the whole Unix tree).
    pub fn win(&self, path: &Path) -> String {
        let (drive, rest) = match path.strip_prefix(self.dir.join("drive_c")) {
            Ok(rest) => ("C:", rest.to_path_buf()),
            Err(_) => ("Z:", path.to_path_buf()),
        };
        let rest = rest.to_string_lossy().replace('/', "\\");
        if rest.starts_with('\\') {
            format!("{drive}{rest}")
        } else {
            format!("{drive}\\{rest}")
        }
    }

    /// Ends every process of this prefix now (its `wineserver -k`).
    pub fn kill_all(&self) {
        let _ = Command::new(WINESERVER)
            .arg("-k")
            .env("WINEPREFIX", &self.dir)
            .output();
    }

    /// The Linux pids of this prefix's Wine processes whose command line holds `needle` (any
    /// case; `fabric-fake.exe --runner`), found by their `WINEPREFIX` and command line.
    pub fn processes_of(&self, needle: &str) -> Vec<u32> {
        let wanted = format!("WINEPREFIX={}", self.dir.display()).into_bytes();
        let image = needle.to_ascii_lowercase().into_bytes();
        let mut pids = Vec::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let (Ok(cmdline), Ok(environ)) = (
                std::fs::read(entry.path().join("cmdline")),
                std::fs::read(entry.path().join("environ")),
            ) else {
                continue;
            };
            let zombie = std::fs::read_to_string(entry.path().join("stat"))
                .ok()
                .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.starts_with('Z')))
                .unwrap_or(true);
            // Wine gives a Windows process's command line split at its spaces: joined again,
            // without quotes, it reads as the command line did.
            let cmdline: Vec<u8> = cmdline
                .to_ascii_lowercase()
                .split(|&b| b == 0)
                .filter(|word| !word.is_empty())
                .collect::<Vec<_>>()
                .join(&b' ')
                .into_iter()
                .filter(|&b| b != b'"')
                .collect();
            if !zombie
                && environ
                    .split(|&b| b == 0)
                    .any(|var| var == wanted.as_slice())
                && cmdline.windows(image.len()).any(|w| w == image.as_slice())
            {
                pids.push(pid);
            }
        }
        pids
    }
}

impl Drop for Prefix {
    fn drop(&mut self) {
        self.kill_all();
        if let Some(base) = self.dir.parent() {
            let _ = std::fs::remove_dir_all(base);
        }
    }
}

/// Copies `from` into `to`: symlinks as symlinks, files under [`LINKED`] hard-linked, every
/// other file copied.
fn copy_tree(from: &Path, to: &Path, relative: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        let relative = relative.join(entry.file_name());
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source)?, &target)?;
        } else if kind.is_dir() {
            copy_tree(&source, &target, &relative)?;
        } else if LINKED.iter().any(|dir| relative.starts_with(dir)) {
            std::fs::hard_link(&source, &target)?;
        } else {
            std::fs::copy(&source, &target)?;
        }
    }
    Ok(())
}
