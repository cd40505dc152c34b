//! A virtual display for Wine's windows: Xvfb on a free display number, optionally `trayer` (the XEmbed tray Wine's `explorer.exe` docks its
//! notification area into), screenshots, and a watch of every top-level window mapped on it
//! (a console window flashing up, a menu, a balloon).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    AtomEnum, ChangeWindowAttributesAux, ConnectionExt as _, EventMask, Window,
};

/// The programs a display needs.
pub const PROGRAMS: [&str; 4] = ["Xvfb", "xwininfo", "xdotool", "import"];

/// A running Xvfb (and what was started on it); everything is ended on drop.
pub struct Display {
    /// `:<n>`.
    pub name: String,
    procs: Vec<Child>,
}

impl Display {
    /// Starts Xvfb; `None` (said, or a failure under `FABRIC_REQUIRE_DESKTOP_TESTS=1`) when
    /// its programs are missing.
    pub fn start(test: &str) -> Option<Display> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let missing: Vec<&str> = PROGRAMS
            .iter()
            .copied()
            .filter(|p| !std::env::split_paths(&path).any(|d| d.join(p).is_file()))
            .collect();
        if !missing.is_empty() {
            crate::skip(
                test,
                &format!(
                    "no virtual display: {} not found (packages xvfb, x11-utils, xdotool, imagemagick)",
                    missing.join(", ")
                ),
            );
            return None;
        }
        // A free display number: no lock file, and Xvfb takes it (a race with another test
        // makes Xvfb exit at once; the next number is tried).
        let first = 100 + std::process::id() % 300;
        for n in (first..first + 200).map(|n| n % 900 + 100) {
            if Path::new(&format!("/tmp/.X{n}-lock")).exists() {
                continue;
            }
            let mut xvfb = Command::new("Xvfb")
                .arg(format!(":{n}"))
                .args(["-screen", "0", "1024x768x24", "-nolisten", "tcp"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start Xvfb");
            let socket = format!("/tmp/.X11-unix/X{n}");
            let start = Instant::now();
            loop {
                if Path::new(&socket).exists() && x11rb::connect(Some(&format!(":{n}"))).is_ok() {
                    return Some(Display {
                        name: format!(":{n}"),
                        procs: vec![xvfb],
                    });
                }
                if xvfb.try_wait().ok().flatten().is_some()
                    || start.elapsed() > Duration::from_secs(15)
                {
                    let _ = xvfb.kill();
                    let _ = xvfb.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        panic!("{test}: no display number free for Xvfb");
    }

    /// Starts `trayer`, an XEmbed system tray, at the bottom right, and waits for its window.
    pub fn start_trayer(&mut self) {
        let trayer = Command::new("trayer")
            .args([
                "--edge",
                "bottom",
                "--align",
                "right",
                "--widthtype",
                "request",
                "--height",
                "32",
                "--SetDockType",
                "true",
                "--transparent",
                "false",
            ])
            .env("DISPLAY", &self.name)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start trayer (package trayer)");
        self.procs.push(trayer);
        let start = Instant::now();
        while !self.windows_named("panel").iter().any(|_| true) {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "trayer never appeared"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A command with this display.
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command.env("DISPLAY", &self.name);
        command
    }

    /// A screenshot of the whole screen into `path` (PNG).
    pub fn screenshot(&self, path: &Path) {
        let status = self
            .command("import")
            .args(["-window", "root"])
            .arg(path)
            .status()
            .expect("import");
        assert!(status.success(), "import failed");
    }

    /// Viewable windows whose name contains `name` (xdotool's search).
    pub fn windows_named(&self, name: &str) -> Vec<u32> {
        let out = self
            .command("xdotool")
            .args(["search", "--onlyvisible", "--name", name])
            .output()
            .expect("xdotool");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Starts watching for windows mapped on this display from now on.
    pub fn watch_windows(&self) -> WindowWatch {
        WindowWatch::start(&self.name)
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        for child in self.procs.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// One top-level window that was mapped: its id and name (`WM_NAME`, when it had one).
#[derive(Debug, Clone)]
pub struct MappedWindow {
    pub id: Window,
    pub name: String,
}

/// Every window mapped as a child of the root window while it runs.
pub struct WindowWatch {
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<MappedWindow>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl WindowWatch {
    fn start(display: &str) -> WindowWatch {
        let (conn, screen) = x11rb::connect(Some(display)).expect("connect to the display");
        let root = conn.setup().roots[screen].root;
        conn.change_window_attributes(
            root,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::SUBSTRUCTURE_NOTIFY),
        )
        .expect("select root events")
        .check()
        .expect("select root events");
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let (stop, seen) = (stop.clone(), seen.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match conn.poll_for_event() {
                        Ok(Some(Event::MapNotify(map))) => {
                            let name = conn
                                .get_property(
                                    false,
                                    map.window,
                                    AtomEnum::WM_NAME,
                                    AtomEnum::ANY,
                                    0,
                                    256,
                                )
                                .ok()
                                .and_then(|c| c.reply().ok())
                                .map(|r| String::from_utf8_lossy(&r.value).into_owned())
                                .unwrap_or_default();
                            seen.lock().expect("lock").push(MappedWindow {
                                id: map.window,
                                name,
                            });
                        }
                        Ok(Some(_)) => {}
                        Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                        Err(_) => break,
                    }
                }
            })
        };
        WindowWatch {
            stop,
            seen,
            thread: Some(thread),
        }
    }

    /// The windows mapped so far.
    pub fn seen(&self) -> Vec<MappedWindow> {
        self.seen.lock().expect("lock").clone()
    }

    /// Stops watching; the windows mapped while it ran.
    pub fn finish(mut self) -> Vec<MappedWindow> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        self.seen()
    }
}

impl Drop for WindowWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
