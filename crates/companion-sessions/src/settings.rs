//! The desktop side's one settings file, `<config dir>/settings.json`: written atomically by
//! the dashboard (and by the tray for its Notifications ▸ Pause items), watched by the tray.
//!
//! A file that is missing or does not parse reads as the defaults, and is never overwritten
//! by a read; unknown keys written by a newer version are kept on write.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use companion_platform::fsutil;
use companion_platform::paths::Paths;

/// How notifications behave, one line per rule: said in the dashboard's Settings and the
/// tray page, docs/desktops.md (a test keeps its copy the same); the tray's model implements them.
pub const NOTIFICATION_RULES: [&str; 9] = [
    "A session in a turn (a prompt is running) is not notified of mail: you are at it.",
    "A session you are looking at is not notified: its own tab is the one in front, not just its terminal's window. Where the terminal cannot say which tab is in front (GNOME Terminal, Ptyxis, Console, editors, kitty without remote control), you are notified.",
    "Rises in several sessions within 5 seconds become one notification (\"3 sessions · 7 unread\"), replaced in place, never stacked; so do sessions that come to need you within 5 seconds (\"2 sessions need you\").",
    "At most one notification a minute per session; a session back to zero unread takes its notification away.",
    "Quiet hours: no notifications from From until Until, local time, across midnight too; the icon still counts.",
    "Muted projects (folder names): their sessions never notify; the icon still counts them.",
    "Clicking a session's notification, its line in the tray's menu or Go to on the Overview raises the window it runs in.",
    "A session that needs you (a permission prompt, a question) gets one notification per wait once it has waited the grace (5 seconds unless set), inside its turn too; answering takes it away. The icon shows a mark while any session needs you.",
    "A long turn finishing says so only if you set how many minutes is long (off unless set).",
];

/// How long a session must have needed you before it is notified, unless set: an answer given
/// at once makes no notification.
pub const DEFAULT_NEEDS_YOU_GRACE_SECS: u64 = 5;
/// The longest grace that can be set.
pub const MAX_NEEDS_YOU_GRACE_SECS: u64 = 600;

/// The watch interval may not go below this many seconds (the same floor as `watch-mail`).
pub const MIN_WATCH_INTERVAL_SECS: u64 = 10;
/// The watch interval may not go above this many seconds (24 hours, as the dashboard says).
pub const MAX_WATCH_INTERVAL_SECS: u64 = 24 * 3600;
const SETTINGS_LIMIT: u64 = 256 * 1024;

/// Quiet hours: no notifications between `start` and `end` (local `HH:MM`, may wrap midnight);
/// the icon still counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuietHours {
    pub start: String,
    pub end: String,
}

impl QuietHours {
    /// Whether `minute_of_day` (0–1439, local time) falls inside the quiet hours.
    pub fn contains(&self, minute_of_day: u32) -> bool {
        let (Some(start), Some(end)) = (parse_hh_mm(&self.start), parse_hh_mm(&self.end)) else {
            return false;
        };
        if start <= end {
            (start..end).contains(&minute_of_day)
        } else {
            minute_of_day >= start || minute_of_day < end
        }
    }
}

/// Parses `HH:MM` into minutes since midnight.
pub fn parse_hh_mm(text: &str) -> Option<u32> {
    let (h, m) = text.split_once(':')?;
    let (h, m): (u32, u32) = (h.parse().ok()?, m.parse().ok()?);
    (h < 24 && m < 60).then_some(h * 60 + m)
}

/// Everything a person can set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    /// Seconds between watch-mail looks (± 20 %); 10 to 86,400 (24 hours), any other number
    /// in the file clamped into that range when read.
    #[serde(deserialize_with = "interval_in_range")]
    pub watch_interval_secs: u64,
    /// Desktop notifications on or off.
    pub notifications: bool,
    /// No notifications during these hours.
    pub quiet_hours: Option<QuietHours>,
    /// Start the tray when the person logs in.
    pub launch_at_login: bool,
    /// Notifications paused until this RFC 3339 time (the tray's Pause items).
    pub notifications_paused_until: Option<String>,
    /// Hosts whose "Set up hooks for …" offer the person dismissed: never offered again.
    pub dismissed_hook_offers: Vec<companion_hosts::host::Host>,
    /// Projects (folder names) whose sessions never notify; the icon still counts them.
    pub muted_projects: Vec<String>,
    /// Seconds a session must have needed you before it is notified (at most 600).
    pub needs_you_grace_secs: u64,
    /// A turn longer than this many minutes says so when it finishes; `None`: never.
    pub long_turn_minutes: Option<u64>,
    /// Machines whose sessions the tray follows, as written (an `ssh` destination or `Host`
    /// alias, `docker:<container>`, `podman:<container>`, `wsl:<distribution>`); read by
    /// `companion-remotes`, which refuses any it cannot check.
    pub remotes: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            watch_interval_secs: 60,
            notifications: true,
            quiet_hours: None,
            launch_at_login: false,
            notifications_paused_until: None,
            dismissed_hook_offers: Vec::new(),
            muted_projects: Vec::new(),
            needs_you_grace_secs: DEFAULT_NEEDS_YOU_GRACE_SECS,
            long_turn_minutes: None,
            remotes: Vec::new(),
        }
    }
}

impl Settings {
    /// The interval clamped to its range ([`clamp_interval_secs`]).
    pub fn effective_interval_secs(&self) -> u64 {
        clamp_interval_secs(self.watch_interval_secs)
    }

    /// The grace with its ceiling applied.
    pub fn effective_grace_secs(&self) -> u64 {
        self.needs_you_grace_secs.min(MAX_NEEDS_YOU_GRACE_SECS)
    }

    /// The long-turn threshold in minutes, when set (0 reads as off).
    pub fn long_turn(&self) -> Option<u64> {
        self.long_turn_minutes.filter(|m| *m > 0)
    }
}

/// `secs` within [`MIN_WATCH_INTERVAL_SECS`]..=[`MAX_WATCH_INTERVAL_SECS`].
pub fn clamp_interval_secs(secs: u64) -> u64 {
    secs.clamp(MIN_WATCH_INTERVAL_SECS, MAX_WATCH_INTERVAL_SECS)
}

/// Reads `watchIntervalSecs` as any JSON number, clamped into its range (a person may write
/// `1e9` or `-1` by hand); anything else is the default, never a reason to drop the file.
fn interval_in_range<'de, D: serde::Deserializer<'de>>(de: D) -> Result<u64, D::Error> {
    let secs = match Value::deserialize(de)? {
        Value::Number(n) => match (n.as_u64(), n.as_f64()) {
            (Some(secs), _) => secs,
            // Negative, fractional or beyond u64: `as` saturates (NaN is not JSON).
            (None, Some(secs)) => secs as u64,
            (None, None) => Settings::default().watch_interval_secs,
        },
        _ => Settings::default().watch_interval_secs,
    };
    Ok(clamp_interval_secs(secs))
}

/// Why settings could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} does not parse as JSON; it was left untouched")]
    Unparseable { path: PathBuf },
}

/// The settings file's path.
pub fn settings_path(paths: &Paths) -> PathBuf {
    paths.config_dir.join("settings.json")
}

/// Reads the settings; defaults when the file is missing or does not parse.
pub fn load(path: &Path) -> Settings {
    fsutil::read_json(path, SETTINGS_LIMIT).unwrap_or_default()
}

/// Writes the settings atomically, keeping keys this version does not know. A file that
/// exists but does not parse is refused, not replaced.
pub fn save(path: &Path, settings: &Settings) -> Result<(), SettingsError> {
    let mut merged: Map<String, Value> = match fsutil::read_bounded(path, SETTINGS_LIMIT) {
        Ok(Some(bytes)) => match serde_json::from_slice(&bytes) {
            Ok(Value::Object(map)) => map,
            _ => {
                return Err(SettingsError::Unparseable {
                    path: path.to_path_buf(),
                });
            }
        },
        _ => Map::new(),
    };
    if let Ok(Value::Object(ours)) = serde_json::to_value(settings) {
        merged.extend(ours);
    }
    let mut text = serde_json::to_vec_pretty(&Value::Object(merged)).unwrap_or_default();
    text.push(b'\n');
    let write_error = |source| SettingsError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        fsutil::create_private_dir(dir).map_err(write_error)?;
    }
    fsutil::write_atomic(path, &text, fsutil::PRIVATE_FILE_MODE).map_err(write_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_or_bad_file_reads_as_defaults_and_bad_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        assert_eq!(load(&path), Settings::default());
        std::fs::write(&path, "{oops").unwrap();
        assert_eq!(load(&path), Settings::default());
        assert!(save(&path, &Settings::default()).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{oops");
    }

    #[test]
    fn save_keeps_unknown_keys_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cfg/settings.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, r#"{"futureKey": 1, "notifications": true}"#).unwrap();
        let settings = Settings {
            watch_interval_secs: 120,
            notifications: false,
            quiet_hours: Some(QuietHours {
                start: "22:00".into(),
                end: "07:30".into(),
            }),
            muted_projects: vec!["noisy-repo".into()],
            ..Settings::default()
        };
        save(&path, &settings).unwrap();
        assert_eq!(load(&path), settings);
        let raw: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(raw["futureKey"], 1);
    }

    #[test]
    fn dismissed_hook_offers_are_kept_by_host_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let settings = Settings {
            dismissed_hook_offers: vec![companion_hosts::host::Host::Codex],
            ..Settings::default()
        };
        save(&path, &settings).unwrap();
        let raw: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(raw["dismissedHookOffers"], serde_json::json!(["codex"]));
        assert_eq!(load(&path), settings);
    }

    #[test]
    fn quiet_hours_wrap_midnight_and_interval_has_a_floor() {
        let night = QuietHours {
            start: "22:00".into(),
            end: "07:30".into(),
        };
        assert!(night.contains(23 * 60));
        assert!(night.contains(60));
        assert!(!night.contains(12 * 60));
        assert!(!night.contains(7 * 60 + 30));
        let settings = Settings {
            watch_interval_secs: 3,
            ..Settings::default()
        };
        assert_eq!(settings.effective_interval_secs(), 10);
    }

    /// Issue 21: 2^64-1 seconds overflowed the tray's `Instant` arithmetic. The interval is
    /// clamped to its documented range (10 s to 24 hours) when read, whatever number the file
    /// holds, and a value that is no number is the default; the rest of the file still counts.
    #[test]
    fn a_huge_or_odd_interval_is_clamped_to_its_range_on_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        for (value, want) in [
            ("18446744073709551615", MAX_WATCH_INTERVAL_SECS),
            ("1e30", MAX_WATCH_INTERVAL_SECS),
            ("90000", MAX_WATCH_INTERVAL_SECS),
            ("-5", MIN_WATCH_INTERVAL_SECS),
            ("3", MIN_WATCH_INTERVAL_SECS),
            ("600", 600),
            ("\"soon\"", 60),
        ] {
            std::fs::write(
                &path,
                format!(r#"{{"watchIntervalSecs": {value}, "notifications": false}}"#),
            )
            .unwrap();
            let settings = load(&path);
            assert_eq!(settings.watch_interval_secs, want, "{value}");
            assert_eq!(settings.effective_interval_secs(), want, "{value}");
            assert!(
                !settings.notifications,
                "{value}: the rest of the file was lost"
            );
        }
        assert_eq!(MAX_WATCH_INTERVAL_SECS, 24 * 3600);
        let settings = Settings {
            watch_interval_secs: u64::MAX,
            ..Settings::default()
        };
        assert_eq!(settings.effective_interval_secs(), MAX_WATCH_INTERVAL_SECS);
    }
}
