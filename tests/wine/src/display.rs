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
        // makes Xvfb exit at once; the next number is tried). The lock file must name our
        // Xvfb: until the loser of a race exits, the winner's socket answers for it.
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
                let ours = std::fs::read_to_string(format!("/tmp/.X{n}-lock"))
                    .is_ok_and(|pid| pid.trim() == xvfb.id().to_string());
                if ours
                    && Path::new(&socket).exists()
                    && x11rb::connect(Some(&format!(":{n}"))).is_ok()
                {
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

    /// Every window in the tree (`xwininfo -root -tree`), in its order: children follow
    /// their parent, one indentation deeper.
    pub fn tree(&self) -> Vec<XWindow> {
        let out = self
            .command("xwininfo")
            .args(["-root", "-tree"])
            .output()
            .expect("xwininfo");
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(XWindow::parse)
            .collect()
    }

    /// The icon docked in trayer, where trayer has laid it out: the first window of `class`
    /// in trayer's panel, wholly inside the panel, at the same place in two reads of the
    /// tree. An icon docking is embedded first and placed after: trayer (`--widthtype
    /// request`, aligned right) widens its panel and moves it left only once the icon is in
    /// it, so one read can catch the icon where it does not stay (beyond the screen's right
    /// edge), and pixels read there would never show it.
    pub fn docked_icon(&self, class: &str) -> Option<XWindow> {
        let first = self.icon_in_panel(class)?;
        (self.icon_in_panel(class)? == first).then_some(first)
    }

    /// [`Display::docked_icon`]'s one read of the tree.
    fn icon_in_panel(&self, class: &str) -> Option<XWindow> {
        let tree = self.tree();
        let panel = tree
            .iter()
            .position(|w| w.class == "trayer" && w.name == "panel")?;
        let (depth, area) = (tree[panel].depth, &tree[panel]);
        tree[panel + 1..]
            .iter()
            .take_while(|w| w.depth > depth)
            .find(|w| w.class == class && w.w >= 16 && w.h >= 16)
            .filter(|w| {
                w.x >= area.x
                    && w.y >= area.y
                    && w.x + w.w as i32 <= area.x + area.w as i32
                    && w.y + w.h as i32 <= area.y + area.h as i32
            })
            .cloned()
    }

    /// The docked icon of `class` ([`Display::docked_icon`]) and a screenshot's pixels in it,
    /// saving the whole screen as `path`; `None` unless the icon was at the same place before
    /// and after the screenshot. Each look finds the icon again: where it was at an earlier
    /// look is no proof of where it is now.
    pub fn icon_pixels(&self, path: &Path, class: &str) -> Option<(XWindow, Vec<[u8; 3]>)> {
        let before = self.docked_icon(class)?;
        let pixels = self.pixels(path, &before);
        (self.icon_in_panel(class)? == before).then_some((before, pixels))
    }

    /// Top-level windows of `class` at least `min` pixels wide and high (a menu, a balloon).
    pub fn top_windows(&self, class: &str, min: u32) -> Vec<XWindow> {
        let tree = self.tree();
        let top = tree.iter().map(|w| w.depth).min().unwrap_or(0);
        tree.into_iter()
            .filter(|w| w.depth == top && w.class == class && w.w >= min && w.h >= min)
            .collect()
    }

    /// A screenshot's pixels in `window`'s rectangle (RGB), saving the whole screen as `path`.
    pub fn pixels(&self, path: &Path, window: &XWindow) -> Vec<[u8; 3]> {
        self.screenshot(path);
        let mut decoder = png::Decoder::new(std::io::BufReader::new(
            std::fs::File::open(path).expect("the screenshot"),
        ));
        // import writes a palette or grey image when the screen has few colours: 8-bit RGB(A).
        decoder.set_transformations(png::Transformations::normalize_to_color8());
        let mut reader = decoder.read_info().expect("a PNG");
        let mut buffer = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut buffer).expect("a frame");
        let channels = info.color_type.samples();
        assert!(channels >= 3, "an RGB screenshot: {:?}", info.color_type);
        let mut pixels = Vec::new();
        for y in window.y.max(0) as u32..(window.y.max(0) as u32 + window.h).min(info.height) {
            for x in window.x.max(0) as u32..(window.x.max(0) as u32 + window.w).min(info.width) {
                let at = ((y * info.width + x) as usize) * channels;
                pixels.push([buffer[at], buffer[at + 1], buffer[at + 2]]);
            }
        }
        pixels
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

/// A window as `xwininfo -tree` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XWindow {
    pub id: u32,
    /// How deep in the tree (its line's indentation).
    pub depth: usize,
    pub name: String,
    /// `WM_CLASS`'s class part ("explorer.exe", "trayer"); empty when it has none.
    pub class: String,
    pub w: u32,
    pub h: u32,
    /// Where it is on the screen.
    pub x: i32,
    pub y: i32,
}

impl XWindow {
    /// `     0x60000a "name": ("explorer.exe" "explorer.exe")  22x32+1002+736  +1002+736`
    fn parse(line: &str) -> Option<XWindow> {
        let trimmed = line.trim_start();
        let depth = line.len() - trimmed.len();
        let (id, rest) = trimmed.split_once(' ')?;
        let id = u32::from_str_radix(id.strip_prefix("0x")?, 16).ok()?;
        let name = match rest.strip_prefix('"') {
            Some(named) => named.split_once("\":").map(|(n, _)| n.to_owned())?,
            None => String::new(),
        };
        let class = rest
            .split_once(": (")
            .and_then(|(_, c)| c.split_once(')'))
            .map(|(c, _)| c.rsplit('"').nth(1).unwrap_or("").to_owned())
            .unwrap_or_default();
        let words: Vec<&str> = rest.split_whitespace().collect();
        let absolute = words.last()?;
        let size = words.get(words.len().checked_sub(2)?)?;
        let (w, size_rest) = size.split_once('x')?;
        let h = size_rest.split(['+', '-']).next()?;
        let mut corner = absolute
            .trim_start_matches('+')
            .split('+')
            .map(|n| n.parse::<i32>());
        Some(XWindow {
            id,
            depth,
            name,
            class,
            w: w.parse().ok()?,
            h: h.parse().ok()?,
            x: corner.next()?.ok()?,
            y: corner.next()?.ok()?,
        })
    }

    /// Its centre on the screen.
    pub fn center(&self) -> (i32, i32) {
        (self.x + self.w as i32 / 2, self.y + self.h as i32 / 2)
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
