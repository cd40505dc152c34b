//! What a StatusNotifierWatcher says an item is: the entries of its
//! `RegisteredStatusNotifierItems` list and the argument of its `StatusNotifierItemUnregistered`
//! signal, parsed into [`WatcherEntry`] and matched against our item ([`Ours`]).
//!
//! The forms seen on real watchers:
//! - `:1.28/StatusNotifierItem` (KDE's watcher, AppIndicator before 59, Debian's
//!   `status-notifier-watcher`) and `:1.28` alone (an item registered by bus name);
//! - `:1.28@/StatusNotifierItem` (GNOME's AppIndicator extension 59 to 65);
//! - `org.kde.StatusNotifierItem-1234-1`, optionally with a path (items that own a name);
//! - `/StatusNotifierItem`, the path alone (AppIndicator 66, GNOME 50, for an item registered
//!   by object path): it names no connection, so it is "ours" only as far as the path is.
//!
//! Entries come from another process: anything longer than [`MAX_ENTRY`] or not in one of
//! these shapes is [`WatcherEntry::Unknown`], never ours.

/// The longest entry looked at (a bus name is at most 255 bytes, an item's path is short).
pub const MAX_ENTRY: usize = 512;

/// One entry of a watcher, parsed. Borrowed from the watcher's string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatcherEntry<'a> {
    /// A connection's unique name (`:1.28`), with the item's path when the watcher gave one.
    Unique {
        name: &'a str,
        path: Option<&'a str>,
    },
    /// A well-known name (`org.kde.StatusNotifierItem-1234-1`), with a path when given.
    WellKnown {
        name: &'a str,
        path: Option<&'a str>,
    },
    /// An object path alone (`/StatusNotifierItem`, AppIndicator 66).
    PathOnly(&'a str),
    /// Empty, too long, or in no known shape.
    Unknown,
}

/// Whether an entry names our item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ours {
    /// Our connection's unique name (with our path, or no path).
    Yes,
    /// Our item's path alone: ours, or another item registered by the same path (the watcher
    /// does not say whose).
    PathOnly,
    /// Someone else's, or not an entry we understand.
    No,
}

impl Ours {
    /// Ours for sure or by path.
    pub fn maybe(self) -> bool {
        self != Ours::No
    }
}

impl<'a> WatcherEntry<'a> {
    /// Parses one entry; see the module's comment for the forms.
    pub fn parse(entry: &'a str) -> WatcherEntry<'a> {
        if entry.is_empty() || entry.len() > MAX_ENTRY {
            return WatcherEntry::Unknown;
        }
        if entry.starts_with('/') {
            return if is_object_path(entry) {
                WatcherEntry::PathOnly(entry)
            } else {
                WatcherEntry::Unknown
            };
        }
        let (name, path) = match entry.find(['/', '@']) {
            None => (entry, None),
            Some(at) => {
                let (name, rest) = entry.split_at(at);
                let path = rest.strip_prefix('@').unwrap_or(rest);
                if !is_object_path(path) {
                    return WatcherEntry::Unknown;
                }
                (name, Some(path))
            }
        };
        if is_unique_name(name) {
            WatcherEntry::Unique { name, path }
        } else if is_well_known_name(name) {
            WatcherEntry::WellKnown { name, path }
        } else {
            WatcherEntry::Unknown
        }
    }

    /// Whether this entry names our item: the connection `unique` (e.g. `:1.42`) serving it
    /// at `path`. We own no well-known name, so such entries are never ours.
    pub fn ours(&self, unique: &str, path: &str) -> Ours {
        match *self {
            WatcherEntry::Unique { name, path: listed }
                if !unique.is_empty() && name == unique && listed.is_none_or(|p| p == path) =>
            {
                Ours::Yes
            }
            WatcherEntry::PathOnly(listed) if listed == path => Ours::PathOnly,
            _ => Ours::No,
        }
    }
}

/// Whether a watcher's list names our item, and how surely: [`Ours::Yes`] when any entry has
/// our unique name, else [`Ours::PathOnly`] when any is our path alone.
pub fn listed<S: AsRef<str>>(entries: &[S], unique: &str, path: &str) -> Ours {
    let mut best = Ours::No;
    for entry in entries {
        match WatcherEntry::parse(entry.as_ref()).ours(unique, path) {
            Ours::Yes => return Ours::Yes,
            Ours::PathOnly => best = Ours::PathOnly,
            Ours::No => {}
        }
    }
    best
}

/// `:` then dot-separated elements of `[A-Za-z0-9_-]`, at least two, as the bus gives.
fn is_unique_name(name: &str) -> bool {
    name.len() <= 255
        && name.strip_prefix(':').is_some_and(|rest| {
            let mut parts = 0;
            for part in rest.split('.') {
                if part.is_empty()
                    || !part
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                {
                    return false;
                }
                parts += 1;
            }
            parts >= 2
        })
}

/// Dot-separated elements of `[A-Za-z0-9_-]` not starting with a digit, at least two.
fn is_well_known_name(name: &str) -> bool {
    let mut parts = 0;
    for part in name.split('.') {
        if part.is_empty()
            || part.as_bytes()[0].is_ascii_digit()
            || !part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        {
            return false;
        }
        parts += 1;
    }
    name.len() <= 255 && parts >= 2
}

/// `/`, or `/` then `/`-separated elements of `[A-Za-z0-9_]`.
fn is_object_path(path: &str) -> bool {
    path == "/"
        || path.strip_prefix('/').is_some_and(|rest| {
            rest.split('/').all(|part| {
                !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: &str = ":1.42";
    const PATH: &str = "/StatusNotifierItem";

    #[test]
    fn every_form_a_watcher_lists_is_parsed() {
        assert_eq!(
            WatcherEntry::parse(":1.28/StatusNotifierItem"),
            WatcherEntry::Unique {
                name: ":1.28",
                path: Some(PATH)
            }
        );
        assert_eq!(
            WatcherEntry::parse(":1.28@/StatusNotifierItem"),
            WatcherEntry::Unique {
                name: ":1.28",
                path: Some(PATH)
            }
        );
        assert_eq!(
            WatcherEntry::parse(":1.28"),
            WatcherEntry::Unique {
                name: ":1.28",
                path: None
            }
        );
        assert_eq!(
            WatcherEntry::parse("org.kde.StatusNotifierItem-1234-1"),
            WatcherEntry::WellKnown {
                name: "org.kde.StatusNotifierItem-1234-1",
                path: None
            }
        );
        assert_eq!(
            WatcherEntry::parse("org.kde.StatusNotifierItem-1234-1/StatusNotifierItem"),
            WatcherEntry::WellKnown {
                name: "org.kde.StatusNotifierItem-1234-1",
                path: Some(PATH)
            }
        );
        assert_eq!(
            WatcherEntry::parse("/StatusNotifierItem"),
            WatcherEntry::PathOnly(PATH)
        );
        assert_eq!(
            WatcherEntry::parse("/org/ayatana/NotificationItem/x"),
            WatcherEntry::PathOnly("/org/ayatana/NotificationItem/x")
        );
    }

    #[test]
    fn what_is_not_an_entry_is_unknown() {
        for bad in [
            "",
            ":",
            ":1",
            ":1..2",
            ":1.28//x",
            ":1.28@",
            ":1.28@StatusNotifierItem",
            "/Status Notifier",
            "//x",
            "org",
            "1org.kde.x",
            "org.kde.x y",
            "ünïcode.name",
        ] {
            assert_eq!(WatcherEntry::parse(bad), WatcherEntry::Unknown, "{bad:?}");
        }
        let long = format!(":1.{}", "2".repeat(MAX_ENTRY));
        assert_eq!(WatcherEntry::parse(&long), WatcherEntry::Unknown);
    }

    #[test]
    fn which_entries_are_ours() {
        let ours = |entry: &str| WatcherEntry::parse(entry).ours(US, PATH);
        assert_eq!(ours(":1.42"), Ours::Yes);
        assert_eq!(ours(":1.42/StatusNotifierItem"), Ours::Yes);
        assert_eq!(ours(":1.42@/StatusNotifierItem"), Ours::Yes);
        assert_eq!(ours("/StatusNotifierItem"), Ours::PathOnly);
        // Never a prefix match, another path, someone's name, or no name of ours at all.
        assert_eq!(ours(":1.420/StatusNotifierItem"), Ours::No);
        assert_eq!(ours(":1.4"), Ours::No);
        assert_eq!(ours(":1.42/OtherItem"), Ours::No);
        assert_eq!(ours(":1.42@/OtherItem"), Ours::No);
        assert_eq!(ours("/OtherItem"), Ours::No);
        assert_eq!(ours("org.kde.StatusNotifierItem-42-1"), Ours::No);
        assert_eq!(ours("garbage"), Ours::No);
        assert_eq!(WatcherEntry::parse(":1.42").ours("", PATH), Ours::No);
    }

    #[test]
    fn a_list_names_us_surely_or_by_path() {
        assert_eq!(listed(&[":1.7/StatusNotifierItem"], US, PATH), Ours::No);
        assert_eq!(
            listed(
                &["/StatusNotifierItem", ":1.42@/StatusNotifierItem"],
                US,
                PATH
            ),
            Ours::Yes
        );
        assert_eq!(
            listed(&[":1.7@/x", "/StatusNotifierItem"], US, PATH),
            Ours::PathOnly
        );
        assert_eq!(listed::<&str>(&[], US, PATH), Ours::No);
    }
}
