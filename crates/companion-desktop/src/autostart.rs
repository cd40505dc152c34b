//! "Launch the tray at login": the login item that starts `fabric-tray`, one per OS, each
//! written and removed only by this module (the dashboard's Settings turn it on and off):
//! - Linux and other XDG desktops: `$XDG_CONFIG_HOME/autostart/fabric-tray.desktop` (default
//!   `~/.config/autostart`). The Linux package ships a system entry of the same name in
//!   `<$XDG_CONFIG_DIRS>/autostart/` (default `/etc/xdg/autostart`); by the XDG autostart spec
//!   the person's file, when present, replaces it, and `Hidden=true` in it turns the system one
//!   off for that person only. A system entry is never touched;
//! - macOS: a LaunchAgent, `~/Library/LaunchAgents/ai.passioncode.fabric-companion.tray.plist`
//!   (`RunAtLoad`, in the person's GUI session only);
//! - Windows: the `Fabric Companion` value under `HKCU\Software\Microsoft\Windows\CurrentVersion\Run`.
//!
//! Files are written atomically; it removes only its own entry and never starts the tray. The
//! entries' contents are pure functions, tested on every OS. Entries are read the careful way
//! ([`fsutil::read_bounded`]: never blocking, bounded): one that is not a regular file (a FIFO,
//! a device, a folder, a symlink loop) reads as absent and is never written over or removed.

use std::path::{Path, PathBuf};

use crate::programs::{self, Program, Search};
use companion_platform::fsutil;
use companion_platform::paths::Paths;

/// The XDG autostart entry's file name.
pub const AUTOSTART_FILE: &str = "fabric-tray.desktop";

/// The macOS LaunchAgent's label (and file name, with `.plist`).
pub const LAUNCH_AGENT_LABEL: &str = "ai.passioncode.fabric-companion.tray";

/// No desktop entry comes near this.
const ENTRY_LIMIT: u64 = 64 * 1024;

/// The Windows `Run` key, under `HKEY_CURRENT_USER`.
pub const RUN_KEY: &str = r"Software\Microsoft\Windows\CurrentVersion\Run";

/// The value's name under [`RUN_KEY`].
pub const RUN_VALUE: &str = "Fabric Companion";

/// `$XDG_CONFIG_HOME/autostart/fabric-tray.desktop`.
pub fn autostart_file(paths: &Paths) -> PathBuf {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| paths.home.join(".config"));
    config.join("autostart").join(AUTOSTART_FILE)
}

/// The XDG system entries that apply, most important first:
/// `<dir>/autostart/fabric-tray.desktop` for each folder of `$XDG_CONFIG_DIRS` (default
/// `/etc/xdg`).
pub fn system_files() -> Vec<PathBuf> {
    let dirs = std::env::var("XDG_CONFIG_DIRS")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "/etc/xdg".to_string());
    dirs.split(':')
        .filter(|d| Path::new(d).is_absolute())
        .map(|d| Path::new(d).join("autostart").join(AUTOSTART_FILE))
        .collect()
}

/// The person's XDG override that turns a system entry off (the spec's `Hidden=true`).
pub fn hidden_text() -> String {
    "[Desktop Entry]\nType=Application\nName=Fabric Companion\nComment=Turned off in Fabric Companion's settings; delete this file to turn it back on\nHidden=true\n".to_string()
}

/// Whether an entry's text says `Hidden=true` (or GNOME's `X-GNOME-Autostart-enabled=false`)
/// in its `[Desktop Entry]` group.
fn turned_off(text: &str) -> bool {
    let mut in_entry = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_entry = line == "[Desktop Entry]";
            continue;
        }
        if !in_entry {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        if (key == "Hidden" && value == "true")
            || (key == "X-GNOME-Autostart-enabled" && value == "false")
        {
            return true;
        }
    }
    false
}

/// An entry's text; `None` when it is missing, unreadable or not a regular file.
fn read_entry(file: &Path) -> Option<String> {
    let bytes = fsutil::read_bounded(file, ENTRY_LIMIT).ok()??;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Whether a system entry among `system` is on (the first one found decides).
fn system_on(system: &[PathBuf]) -> bool {
    system
        .iter()
        .find_map(|file| read_entry(file))
        .is_some_and(|text| !turned_off(&text))
}

/// XDG: whether the tray starts at login, from the person's entry `own` (on unless turned
/// off) when it is there, else from the system entries.
pub fn xdg_enabled(own: &Path, system: &[PathBuf]) -> bool {
    match read_entry(own) {
        Some(text) => !turned_off(&text),
        None => system_on(system),
    }
}

/// Whether `own` is a regular file (`Ok(true)`) or missing (`Ok(false)`); anything else (a
/// FIFO, a device, a folder, a symlink loop) is never written over nor removed: the error
/// says what it is.
#[cfg(not(windows))]
fn own_entry_is_regular(own: &Path) -> std::io::Result<bool> {
    let what = match fsutil::open_checked(own) {
        Ok(fsutil::Opened::File(..)) => return Ok(true),
        Ok(fsutil::Opened::Missing) => return Ok(false),
        Ok(fsutil::Opened::Special(special)) => format!("is {special}"),
        Err(error) => format!("cannot be read ({error})"),
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "{} {what}, not a regular file; it was left as it is",
            own.display()
        ),
    ))
}

/// XDG: makes the login item match `enabled` for this person. With a system entry on, on
/// removes the person's override and off writes `Hidden=true`; without one, on writes the
/// person's entry (running `tray()`) and off removes it.
#[cfg(not(windows))]
pub fn xdg_set(
    own: &Path,
    system: &[PathBuf],
    enabled: bool,
    tray: impl FnOnce() -> PathBuf,
) -> std::io::Result<()> {
    let wanted = match (enabled, system_on(system)) {
        (true, true) | (false, false) => None,
        (true, false) => Some(autostart_text(&tray())),
        (false, true) => Some(hidden_text()),
    };
    let regular = own_entry_is_regular(own);
    match wanted {
        // A special file reads as absent: there is nothing to remove, and it stays.
        None if !matches!(regular, Ok(true)) => Ok(()),
        None => match std::fs::remove_file(own) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        },
        Some(_) if regular.is_err() => regular.map(drop),
        Some(text) => {
            if let Some(dir) = own.parent() {
                std::fs::create_dir_all(dir)?;
            }
            fsutil::write_atomic(own, text.as_bytes(), 0o644)
        }
    }
}

fn desktop_exec_quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '"' | '`' | '$' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

/// The autostart entry's text for `tray`.
pub fn autostart_text(tray: &Path) -> String {
    format!(
        "[Desktop Entry]\nType=Application\nName=Fabric Companion\nComment=Fabric's unread count and session hooks in the tray\nExec={}\nTerminal=false\nX-GNOME-Autostart-enabled=true\n",
        desktop_exec_quote(tray)
    )
}

/// `~/Library/LaunchAgents/ai.passioncode.fabric-companion.tray.plist`.
pub fn launch_agent_file(paths: &Paths) -> PathBuf {
    paths
        .home
        .join("Library")
        .join("LaunchAgents")
        .join(format!("{LAUNCH_AGENT_LABEL}.plist"))
}

fn xml_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The LaunchAgent's property list for `tray`: started at login in the person's GUI session
/// (`Aqua`), never kept alive against the person's Quit.
pub fn launch_agent_plist(tray: &Path) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>{LAUNCH_AGENT_LABEL}</string>
	<key>ProgramArguments</key>
	<array>
		<string>{}</string>
	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<false/>
	<key>LimitLoadToSessionType</key>
	<string>Aqua</string>
	<key>ProcessType</key>
	<string>Interactive</string>
</dict>
</plist>
"#,
        xml_escape(&tray.to_string_lossy())
    )
}

/// The `Run` value's data for `tray`: the program's path in double quotes (a path with spaces
/// would otherwise be cut at the first one).
pub fn run_value_data(tray: &Path) -> String {
    format!("\"{}\"", tray.to_string_lossy())
}

/// Where this OS's login item is, for a person to read (on Windows, the registry value).
pub fn location(paths: &Paths) -> PathBuf {
    if cfg!(windows) {
        PathBuf::from(format!(r"HKEY_CURRENT_USER\{RUN_KEY}\{RUN_VALUE}"))
    } else if cfg!(target_os = "macos") {
        launch_agent_file(paths)
    } else {
        autostart_file(paths)
    }
}

/// Whether this OS's login item of ours is there.
pub fn is_enabled(paths: &Paths) -> bool {
    #[cfg(windows)]
    {
        let _ = paths;
        windows_run::exists()
    }
    #[cfg(not(windows))]
    {
        if cfg!(target_os = "macos") {
            location(paths).is_file()
        } else {
            xdg_enabled(&autostart_file(paths), &system_files())
        }
    }
}

/// Makes this OS's login item match `enabled`. Removes only our own entry. The item runs the
/// tray found by [`programs::find`], else `fabric-tray` from `PATH`.
pub fn set_autostart(paths: &Paths, enabled: bool) -> std::io::Result<()> {
    let tray = || {
        programs::find(Program::Tray, Search::BesideOrPath)
            .unwrap_or_else(|_| PathBuf::from(Program::Tray.name()))
    };
    #[cfg(windows)]
    {
        let _ = paths;
        if enabled {
            windows_run::set(&run_value_data(&tray()))
        } else {
            windows_run::remove()
        }
    }
    #[cfg(not(windows))]
    {
        if !cfg!(target_os = "macos") {
            return xdg_set(&autostart_file(paths), &system_files(), enabled, tray);
        }
        let file = location(paths);
        if !enabled {
            return match std::fs::remove_file(&file) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                _ => Ok(()),
            };
        }
        let text = launch_agent_plist(&tray());
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        fsutil::write_atomic(&file, text.as_bytes(), 0o644)
    }
}

/// The `Run` value in the registry (Windows only).
#[cfg(windows)]
mod windows_run {
    use std::io;

    use windows_sys::Win32::Foundation::{ERROR_FILE_NOT_FOUND, ERROR_SUCCESS};
    use windows_sys::Win32::System::Registry::{
        HKEY_CURRENT_USER, REG_SZ, RRF_RT_REG_SZ, RegDeleteKeyValueW, RegGetValueW, RegSetKeyValueW,
    };

    use super::{RUN_KEY, RUN_VALUE};

    fn wide(text: &str) -> Vec<u16> {
        text.encode_utf16().chain([0]).collect()
    }

    fn check(code: u32) -> io::Result<()> {
        if code == ERROR_SUCCESS {
            Ok(())
        } else {
            Err(io::Error::from_raw_os_error(code as i32))
        }
    }

    pub fn exists() -> bool {
        let (key, value) = (wide(RUN_KEY), wide(RUN_VALUE));
        let mut size = 0u32;
        // SAFETY: both names are NUL-terminated; a null buffer asks for the size only.
        let code = unsafe {
            RegGetValueW(
                HKEY_CURRENT_USER,
                key.as_ptr(),
                value.as_ptr(),
                RRF_RT_REG_SZ,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut size,
            )
        };
        code == ERROR_SUCCESS
    }

    pub fn set(data: &str) -> io::Result<()> {
        let (key, value, data) = (wide(RUN_KEY), wide(RUN_VALUE), wide(data));
        let bytes = u32::try_from(data.len() * 2).map_err(io::Error::other)?;
        // SAFETY: the names and the data are NUL-terminated UTF-16 buffers that outlive the call;
        // `bytes` is the data's length in bytes, its NUL included, as REG_SZ wants.
        check(unsafe {
            RegSetKeyValueW(
                HKEY_CURRENT_USER,
                key.as_ptr(),
                value.as_ptr(),
                REG_SZ,
                data.as_ptr().cast(),
                bytes,
            )
        })
    }

    pub fn remove() -> io::Result<()> {
        let (key, value) = (wide(RUN_KEY), wide(RUN_VALUE));
        // SAFETY: both names are NUL-terminated UTF-16 buffers that outlive the call.
        let code = unsafe { RegDeleteKeyValueW(HKEY_CURRENT_USER, key.as_ptr(), value.as_ptr()) };
        if code == ERROR_FILE_NOT_FOUND {
            return Ok(());
        }
        check(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autostart_entry_quotes_the_program() {
        let text = autostart_text(Path::new("/opt/my apps/fabric-tray"));
        assert!(text.contains("Exec=\"/opt/my apps/fabric-tray\"\n"));
        assert!(text.starts_with("[Desktop Entry]\n"));
    }

    #[test]
    #[cfg(not(windows))]
    fn without_a_system_entry_the_persons_file_is_the_switch() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("home/autostart").join(AUTOSTART_FILE);
        let system = [dir.path().join("etc/autostart").join(AUTOSTART_FILE)];
        assert!(!xdg_enabled(&own, &system));
        xdg_set(&own, &system, true, || PathBuf::from("/t/fabric-tray")).unwrap();
        assert!(xdg_enabled(&own, &system));
        assert!(
            std::fs::read_to_string(&own)
                .unwrap()
                .contains("Exec=\"/t/fabric-tray\"")
        );
        xdg_set(&own, &system, false, || unreachable!()).unwrap();
        assert!(!own.exists());
        assert!(!xdg_enabled(&own, &system));
    }

    #[test]
    #[cfg(not(windows))]
    fn with_the_packages_entry_off_hides_it_for_this_person_only() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("home/autostart").join(AUTOSTART_FILE);
        let system_file = dir.path().join("etc/autostart").join(AUTOSTART_FILE);
        std::fs::create_dir_all(system_file.parent().unwrap()).unwrap();
        let system_text = autostart_text(Path::new("/usr/bin/fabric-tray"));
        std::fs::write(&system_file, &system_text).unwrap();
        let system = [system_file.clone()];
        assert!(xdg_enabled(&own, &system), "the package's entry is on");

        xdg_set(&own, &system, false, || unreachable!()).unwrap();
        let written = std::fs::read_to_string(&own).unwrap();
        assert!(written.contains("\nHidden=true\n"), "{written}");
        assert!(!xdg_enabled(&own, &system));
        assert_eq!(std::fs::read_to_string(&system_file).unwrap(), system_text);

        xdg_set(&own, &system, true, || unreachable!()).unwrap();
        assert!(!own.exists(), "on again: the override is gone");
        assert!(xdg_enabled(&own, &system));
        assert_eq!(std::fs::read_to_string(&system_file).unwrap(), system_text);
    }

    /// A FIFO (a plain read waits for a writer forever), `/dev/zero` through a symlink (a
    /// plain read never ends), a folder and a symlink loop as the person's entry or the
    /// system's: read at once as absent, and never written over nor removed.
    #[test]
    #[cfg(unix)]
    fn a_special_entry_reads_as_absent_at_once_and_is_never_replaced() {
        use std::sync::mpsc;
        use std::time::Duration;
        fn plant(kind: usize, path: &Path) {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            match kind {
                0 => {
                    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
                    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
                }
                1 => std::os::unix::fs::symlink("/dev/zero", path).unwrap(),
                2 => std::fs::create_dir(path).unwrap(),
                _ => std::os::unix::fs::symlink(path, path).unwrap(),
            }
        }
        let file_type = |p: &Path| std::fs::symlink_metadata(p).unwrap().file_type();
        let watched = |f: Box<dyn FnOnce() -> bool + Send>| {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx.send(f());
            });
            rx.recv_timeout(Duration::from_secs(10))
                .expect("reading the login item hung")
        };
        for kind in 0..4 {
            let dir = tempfile::tempdir().unwrap();
            let own = dir.path().join("home/autostart").join(AUTOSTART_FILE);
            let system_file = dir.path().join("etc/autostart").join(AUTOSTART_FILE);
            // The person's entry special, the package's on: the package's decides.
            plant(kind, &own);
            std::fs::create_dir_all(system_file.parent().unwrap()).unwrap();
            std::fs::write(
                &system_file,
                autostart_text(Path::new("/usr/bin/fabric-tray")),
            )
            .unwrap();
            let system = vec![system_file.clone()];
            let before = file_type(&own);
            let (o, s) = (own.clone(), system.clone());
            assert!(
                watched(Box::new(move || xdg_enabled(&o, &s))),
                "kind {kind}"
            );
            let err = xdg_set(&own, &system, false, || unreachable!()).unwrap_err();
            assert_eq!(
                err.kind(),
                std::io::ErrorKind::InvalidInput,
                "kind {kind}: {err}"
            );
            // On already (the special entry reads as absent): nothing to do, nothing removed.
            xdg_set(&own, &system, true, || unreachable!()).unwrap();
            assert_eq!(file_type(&own), before, "kind {kind}: replaced or removed");

            // The package's entry special, no entry of the person's: off.
            std::fs::remove_file(&system_file).unwrap();
            plant(kind, &system_file);
            let _ = std::fs::remove_file(&own).or_else(|_| std::fs::remove_dir(&own));
            let before = file_type(&system_file);
            let (o, s) = (own.clone(), system.clone());
            assert!(
                !watched(Box::new(move || xdg_enabled(&o, &s))),
                "kind {kind}"
            );
            xdg_set(&own, &system, true, || PathBuf::from("/t/fabric-tray")).unwrap();
            assert_eq!(file_type(&system_file), before, "kind {kind}");
        }
    }

    #[test]
    fn turned_off_reads_only_the_desktop_entry_group() {
        assert!(turned_off("[Desktop Entry]\nHidden=true\n"));
        assert!(turned_off(
            "[Desktop Entry]\nX-GNOME-Autostart-enabled=false\n"
        ));
        assert!(!turned_off("[Desktop Entry]\nHidden=false\n"));
        assert!(!turned_off(
            "[Desktop Entry]\nName=x\n[Desktop Action a]\nHidden=true\n"
        ));
    }

    #[test]
    fn the_launch_agent_runs_the_tray_at_login_in_the_gui_session() {
        let text = launch_agent_plist(Path::new(
            "/Applications/Fabric & Co.app/Contents/MacOS/fabric-tray",
        ));
        assert!(
            text.contains(
                "<key>Label</key>\n\t<string>ai.passioncode.fabric-companion.tray</string>"
            )
        );
        assert!(text.contains(
            "<string>/Applications/Fabric &amp; Co.app/Contents/MacOS/fabric-tray</string>"
        ));
        assert!(text.contains("<key>RunAtLoad</key>\n\t<true/>"));
        assert!(text.contains("<key>KeepAlive</key>\n\t<false/>"));
        assert!(text.contains("<string>Aqua</string>"));
        assert!(text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"));
        // Every opened element is closed: a plist launchd cannot parse is silently ignored.
        for tag in ["dict", "array", "plist"] {
            assert_eq!(
                text.matches(&format!("<{tag}")).count(),
                text.matches(&format!("</{tag}>")).count(),
                "{tag}"
            );
        }
    }

    #[test]
    fn the_launch_agent_lives_in_the_persons_launch_agents_folder() {
        let home = PathBuf::from("/Users/ann");
        let base = companion_platform::paths::BaseFolders {
            home: home.clone(),
            data: home.join("Library/Application Support"),
            data_local: home.join("Library/Application Support"),
            cache: home.join("Library/Caches"),
            config: home.join("Library/Application Support"),
        };
        let paths = Paths::layout(companion_platform::platform::Os::MacOs, &base);
        assert_eq!(
            launch_agent_file(&paths),
            Path::new("/Users/ann/Library/LaunchAgents/ai.passioncode.fabric-companion.tray.plist")
        );
    }

    #[test]
    fn the_run_value_quotes_a_path_with_spaces() {
        assert_eq!(
            run_value_data(Path::new(
                r"C:\Program Files\Fabric Companion\fabric-tray.exe"
            )),
            r#""C:\Program Files\Fabric Companion\fabric-tray.exe""#
        );
        assert_eq!(RUN_KEY, r"Software\Microsoft\Windows\CurrentVersion\Run");
    }
}
