//! The tray's menu as `com.canonical.dbusmenu` (the menu a StatusNotifierItem host draws):
//! the model's [`MenuLine`]s as dbusmenu items, the interface that serves them, and the
//! `Event` calls that come back as the model's menu ids.
//!
//! An item's number stands for its meaning, never its place ([`Ids`]): a session's line keeps
//! its number while the session is in the menu, Quit is Quit whatever appears above it, and a
//! number is never given to another meaning. A host that clicks an item of a menu that has
//! changed since it was drawn (a session appeared or ended in between) therefore either runs
//! what the person saw or, when that item is gone, nothing. Each new menu gets a new
//! revision and a `LayoutUpdated` signal. Every text goes out through [`crate::safe_text`];
//! lists of ids and events a caller sends are bounded.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use zbus::object_server::SignalEmitter;
use zbus::wire::StructureBuilder;
use zbus::{OwnedVariant, Variant};

use crate::model::{Choice, MenuLine};
use crate::safe_text;

/// The object path of the menu.
pub const MENU_PATH: &str = "/MenuBar";

/// The most ids (or events) one `GetGroupProperties`, `EventGroup` or `AboutToShowGroup`
/// call may carry: far more than the menu ever holds, far less than a flood.
pub const MAX_GROUP: usize = 1024;
/// The most property names one call may ask for (dbusmenu defines a handful).
pub const MAX_PROPERTY_NAMES: usize = 64;

/// The root's number (dbusmenu's convention).
const ROOT: i32 = 0;

/// One dbusmenu item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub label: String,
    pub enabled: bool,
    pub separator: bool,
    /// The model's menu id a click on it sends (`None`: informs only).
    pub choice: Option<String>,
    /// Numbers of its children (a submenu has some).
    pub children: Vec<i32>,
}

/// Numbers by meaning: each meaning (a session's line, an action, an information line by its
/// text, the n-th separator) gets a number the first time it is in the menu and keeps it while
/// it stays; numbers are never reused.
#[derive(Debug, Default)]
pub struct Ids {
    by_key: HashMap<String, i32>,
    last: i32,
}

impl Ids {
    /// The numbers of `keys` (a menu's meanings, each once); meanings no longer in the menu
    /// are forgotten (their numbers are not handed out again).
    fn assign(&mut self, keys: &[String]) -> Vec<i32> {
        let mut kept = HashMap::with_capacity(keys.len());
        let numbers = keys
            .iter()
            .map(|key| {
                let number = match self.by_key.get(key) {
                    Some(&n) => n,
                    None => {
                        self.last = self.last.checked_add(1).unwrap_or(1);
                        self.last
                    }
                };
                kept.insert(key.clone(), number);
                number
            })
            .collect();
        self.by_key = kept;
        numbers
    }
}

/// The menu: its items by number, the root (0) among them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub items: BTreeMap<i32, Item>,
}

impl Tree {
    /// The model's lines, numbered by meaning through `ids`.
    pub fn of(lines: &[MenuLine], ids: &mut Ids) -> Tree {
        let mut flat = Vec::new();
        let mut seen = HashMap::new();
        flatten(lines, None, &mut flat, &mut seen);
        let keys: Vec<String> = flat.iter().map(|f| f.key.clone()).collect();
        let numbers = ids.assign(&keys);
        let mut items = BTreeMap::new();
        items.insert(
            ROOT,
            Item {
                label: String::new(),
                enabled: true,
                separator: false,
                choice: None,
                children: Vec::new(),
            },
        );
        for (entry, &number) in flat.iter().zip(&numbers) {
            items.insert(number, entry.item.clone());
        }
        for (entry, &number) in flat.iter().zip(&numbers) {
            let parent = entry.parent.map_or(ROOT, |p| numbers[p]);
            if let Some(parent) = items.get_mut(&parent) {
                parent.children.push(number);
            }
        }
        Tree { items }
    }

    fn get(&self, id: i32) -> Option<&Item> {
        self.items.get(&id)
    }

    /// The model's menu id of a clicked item, if it has one.
    pub fn choice_of(&self, id: i32) -> Option<&str> {
        self.get(id)?.choice.as_deref()
    }

    /// The number of the item that sends `choice`, if the menu holds one.
    pub fn id_of(&self, choice: &str) -> Option<i32> {
        self.items
            .iter()
            .find(|(_, item)| item.choice.as_deref() == Some(choice))
            .map(|(&id, _)| id)
    }

    /// The item's properties (only the ones asked for, or all with an empty list).
    fn properties(&self, id: i32, names: &[String]) -> HashMap<String, Variant<'static>> {
        let Some(item) = self.get(id) else {
            return HashMap::new();
        };
        let mut all: Vec<(&str, Variant<'static>)> = Vec::new();
        if item.separator {
            all.push(("type", Variant::from("separator".to_string())));
        } else if id != ROOT {
            all.push(("label", Variant::from(item.label.clone())));
            all.push(("enabled", Variant::from(item.enabled)));
        }
        if !item.children.is_empty() {
            all.push(("children-display", Variant::from("submenu".to_string())));
        }
        all.into_iter()
            .filter(|(name, _)| names.is_empty() || names.iter().any(|n| n == name))
            .map(|(name, value)| (name.to_string(), value))
            .collect()
    }

    /// The layout from `id` down `depth` levels (`None`: all).
    fn layout(&self, id: i32, depth: Option<usize>, names: &[String]) -> Option<Layout> {
        let item = self.get(id)?;
        let children = match depth {
            Some(0) => Vec::new(),
            _ => item
                .children
                .iter()
                .filter_map(|&child| self.layout(child, depth.map(|d| d - 1), names))
                .filter_map(|child| child.into_variant())
                .collect(),
        };
        Some(Layout {
            id,
            properties: self.properties(id, names),
            children,
        })
    }
}

/// One line of the menu, flattened depth first, before it has its number.
struct Flat {
    key: String,
    /// The index (in the flattened list) of the submenu it is in.
    parent: Option<usize>,
    item: Item,
}

/// What a line means, for its number: the model's menu id where it has one, else its kind
/// and text (a submenu: what it holds).
fn meaning(line: &MenuLine) -> String {
    match line {
        MenuLine::Info(text) => format!("info:{}", safe_text::label(text)),
        MenuLine::Session { session, .. } => Choice::Focus(session.clone()).id(),
        MenuLine::Separator => "separator".to_string(),
        MenuLine::Item { action, .. } => action.id().to_string(),
        MenuLine::Submenu { items, .. } => {
            let inside: Vec<String> = items.iter().map(meaning).collect();
            format!("submenu:[{}]", inside.join(","))
        }
    }
}

fn flatten(
    lines: &[MenuLine],
    parent: Option<usize>,
    flat: &mut Vec<Flat>,
    seen: &mut HashMap<String, usize>,
) {
    for line in lines {
        let base = meaning(line);
        // The same meaning twice (two separators, two equal lines): the n-th of it.
        let n = seen.entry(base.clone()).or_insert(0);
        let key = match *n {
            0 => base,
            n => format!("{base}#{n}"),
        };
        *n += 1;
        let (label, enabled, separator, choice) = match line {
            MenuLine::Info(text) => (text.as_str(), false, false, None),
            MenuLine::Session { label, session } => (
                label.as_str(),
                true,
                false,
                Some(Choice::Focus(session.clone()).id()),
            ),
            MenuLine::Separator => ("", true, true, None),
            MenuLine::Item {
                label,
                action,
                enabled,
            } => (
                label.as_str(),
                *enabled,
                false,
                Some(action.id().to_string()),
            ),
            MenuLine::Submenu { label, .. } => (label.as_str(), true, false, None),
        };
        let index = flat.len();
        flat.push(Flat {
            key,
            parent,
            item: Item {
                label: safe_text::label(label),
                enabled,
                separator,
                choice,
                children: Vec::new(),
            },
        });
        if let MenuLine::Submenu { items, .. } = line {
            flatten(items, Some(index), flat, seen);
        }
    }
}

/// A layout node, `(ia{sv}av)`: children are variants of the same structure.
#[derive(Debug, serde::Serialize, zbus::Type)]
pub struct Layout {
    id: i32,
    properties: HashMap<String, Variant<'static>>,
    children: Vec<Variant<'static>>,
}

impl Layout {
    fn into_variant(self) -> Option<Variant<'static>> {
        StructureBuilder::new()
            .add_field(self.id)
            .add_field(self.properties)
            .add_field(self.children)
            .build()
            .ok()
            .map(Variant::from)
    }
}

/// The `com.canonical.dbusmenu` object: the current tree and where clicks go.
pub struct DbusMenu {
    tree: Tree,
    ids: Ids,
    revision: u32,
    on_choice: Arc<dyn Fn(String) + Send + Sync>,
}

impl DbusMenu {
    pub fn new(lines: &[MenuLine], on_choice: Arc<dyn Fn(String) + Send + Sync>) -> Self {
        let mut ids = Ids::default();
        DbusMenu {
            tree: Tree::of(lines, &mut ids),
            ids,
            revision: 1,
            on_choice,
        }
    }

    /// Takes a new menu; true when it differs (the caller then signals `LayoutUpdated`).
    pub fn replace(&mut self, lines: &[MenuLine]) -> bool {
        let tree = Tree::of(lines, &mut self.ids);
        if tree == self.tree {
            return false;
        }
        self.tree = tree;
        self.revision = self.revision.wrapping_add(1).max(1);
        true
    }

    pub fn revision(&self) -> u32 {
        self.revision
    }

    /// The current menu.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }

    /// An event on item `id`: a click on an enabled item of the current menu sends its
    /// choice; anything else does nothing. False when the menu has no such item.
    fn clicked(&self, id: i32, event: &str) -> bool {
        let Some(item) = self.tree.get(id) else {
            return false;
        };
        if event == "clicked"
            && item.enabled
            && let Some(choice) = &item.choice
        {
            (self.on_choice)(choice.clone());
        }
        true
    }
}

fn too_many(what: &str, limit: usize) -> zbus::fdo::Error {
    zbus::fdo::Error::LimitsExceeded(format!("more than {limit} {what} in one call"))
}

#[zbus::interface(name = "com.canonical.dbusmenu")]
impl DbusMenu {
    fn get_layout(
        &self,
        parent_id: i32,
        recursion_depth: i32,
        property_names: Vec<String>,
    ) -> zbus::fdo::Result<(u32, Layout)> {
        if property_names.len() > MAX_PROPERTY_NAMES {
            return Err(too_many("property names", MAX_PROPERTY_NAMES));
        }
        let depth = usize::try_from(recursion_depth).ok();
        self.tree
            .layout(parent_id, depth, &property_names)
            .map(|layout| (self.revision, layout))
            .ok_or_else(|| zbus::fdo::Error::InvalidArgs("no such menu item".into()))
    }

    fn get_group_properties(
        &self,
        ids: Vec<i32>,
        property_names: Vec<String>,
    ) -> zbus::fdo::Result<Vec<(i32, HashMap<String, Variant<'static>>)>> {
        if ids.len() > MAX_GROUP {
            return Err(too_many("ids", MAX_GROUP));
        }
        if property_names.len() > MAX_PROPERTY_NAMES {
            return Err(too_many("property names", MAX_PROPERTY_NAMES));
        }
        // Each item of the current menu once, however often it was asked for.
        let wanted: Vec<i32> = if ids.is_empty() {
            self.tree.items.keys().copied().collect()
        } else {
            let mut unique: Vec<i32> = ids
                .into_iter()
                .filter(|id| self.tree.get(*id).is_some())
                .collect();
            unique.sort_unstable();
            unique.dedup();
            unique
        };
        Ok(wanted
            .into_iter()
            .map(|id| (id, self.tree.properties(id, &property_names)))
            .collect())
    }

    fn get_property(&self, id: i32, name: String) -> zbus::fdo::Result<OwnedVariant> {
        let mut properties = self.tree.properties(id, std::slice::from_ref(&name));
        properties
            .remove(&name)
            .and_then(|value| OwnedVariant::try_from(value).ok())
            .ok_or_else(|| zbus::fdo::Error::InvalidArgs("no such property".into()))
    }

    fn event(
        &self,
        id: i32,
        event_id: String,
        _data: OwnedVariant,
        _timestamp: u32,
    ) -> zbus::fdo::Result<()> {
        if self.clicked(id, &event_id) {
            Ok(())
        } else {
            Err(zbus::fdo::Error::InvalidArgs("no such menu item".into()))
        }
    }

    /// Events on several items: each (item, event) pair once; the ids not in the menu come
    /// back.
    fn event_group(
        &self,
        events: Vec<(i32, String, OwnedVariant, u32)>,
    ) -> zbus::fdo::Result<Vec<i32>> {
        if events.len() > MAX_GROUP {
            return Err(too_many("events", MAX_GROUP));
        }
        let mut done: Vec<(i32, &str)> = Vec::new();
        let mut missing = Vec::new();
        for (id, event, _, _) in &events {
            if done.contains(&(*id, event.as_str())) {
                continue;
            }
            done.push((*id, event.as_str()));
            if !self.clicked(*id, event) {
                missing.push(*id);
            }
        }
        Ok(missing)
    }

    fn about_to_show(&self, _id: i32) -> bool {
        false
    }

    fn about_to_show_group(&self, ids: Vec<i32>) -> zbus::fdo::Result<(Vec<i32>, Vec<i32>)> {
        if ids.len() > MAX_GROUP {
            return Err(too_many("ids", MAX_GROUP));
        }
        Ok((Vec::new(), Vec::new()))
    }

    #[zbus(property)]
    fn version(&self) -> u32 {
        3
    }

    #[zbus(property)]
    fn text_direction(&self) -> String {
        "ltr".into()
    }

    #[zbus(property)]
    fn status(&self) -> String {
        "normal".into()
    }

    #[zbus(property)]
    fn icon_theme_path(&self) -> Vec<String> {
        Vec::new()
    }

    #[zbus(signal)]
    pub async fn layout_updated(
        emitter: &SignalEmitter<'_>,
        revision: u32,
        parent: i32,
    ) -> zbus::Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Action;

    fn session(id: &str) -> MenuLine {
        MenuLine::Session {
            label: format!("{id} · Claude Code · 2 unread"),
            session: id.into(),
        }
    }

    fn lines_with(sessions: &[&str]) -> Vec<MenuLine> {
        let mut lines = vec![
            MenuLine::Info("Fabric: running".into()),
            MenuLine::Separator,
        ];
        lines.extend(sessions.iter().map(|s| session(s)));
        lines.extend([
            MenuLine::Separator,
            MenuLine::Submenu {
                label: "Notifications".into(),
                items: vec![MenuLine::Item {
                    label: "Pause 1 hour".into(),
                    action: Action::PauseHour,
                    enabled: true,
                }],
            },
            MenuLine::Item {
                label: "Open hook log".into(),
                action: Action::OpenHookLog,
                enabled: true,
            },
            MenuLine::Item {
                label: "Quit".into(),
                action: Action::Quit,
                enabled: true,
            },
        ]);
        lines
    }

    fn recording() -> (Arc<std::sync::Mutex<Vec<String>>>, DbusMenu) {
        let sent = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = Arc::clone(&sent);
        let menu = DbusMenu::new(
            &lines_with(&["s-1"]),
            Arc::new(move |choice| sink.lock().unwrap().push(choice)),
        );
        (sent, menu)
    }

    #[test]
    fn lines_are_nested_in_order_with_their_choices() {
        let tree = Tree::of(&lines_with(&["s-1"]), &mut Ids::default());
        let root = &tree.items[&ROOT];
        assert_eq!(root.children.len(), 7);
        let labels: Vec<&str> = root
            .children
            .iter()
            .map(|id| tree.items[id].label.as_str())
            .collect();
        assert_eq!(
            labels,
            [
                "Fabric: running",
                "",
                "s-1 · Claude Code · 2 unread",
                "",
                "Notifications",
                "Open hook log",
                "Quit"
            ]
        );
        let submenu = &tree.items[&root.children[4]];
        assert_eq!(submenu.children.len(), 1);
        assert_eq!(
            tree.choice_of(submenu.children[0]),
            Some(Action::PauseHour.id())
        );
        assert_eq!(tree.choice_of(root.children[0]), None, "an info line");
        assert_eq!(tree.choice_of(root.children[2]), Some("focus:s-1"));
        assert_eq!(tree.choice_of(ROOT), None);
        assert!(tree.items[&root.children[1]].separator);
        assert!(!tree.items[&root.children[0]].enabled);
        assert!(tree.get(-1).is_none());
    }

    #[test]
    fn a_number_stands_for_a_meaning_not_a_place() {
        let mut ids = Ids::default();
        let before = Tree::of(&lines_with(&["s-1"]), &mut ids);
        // Sessions appear above the actions: every action keeps its number.
        let after = Tree::of(&lines_with(&["s-0", "s-1", "s-2"]), &mut ids);
        for choice in ["focus:s-1", "pause-hour", "open-hook-log", "quit"] {
            assert_eq!(before.id_of(choice), after.id_of(choice), "{choice}");
        }
        // A session that ends takes its number with it, never to be given out again.
        let gone = after.id_of("focus:s-0").unwrap();
        let later = Tree::of(&lines_with(&["s-1", "s-3"]), &mut ids);
        assert!(later.get(gone).is_none());
        assert!(later.items.keys().all(|&id| id != gone));
        let back = Tree::of(&lines_with(&["s-0"]), &mut ids);
        assert_ne!(back.id_of("focus:s-0"), Some(gone));
    }

    #[test]
    fn a_click_after_the_layout_changed_runs_what_was_drawn_or_nothing() {
        let (sent, mut menu) = recording();
        let drawn = menu.tree().clone();
        let hook_log = drawn.id_of("open-hook-log").unwrap();
        let session = drawn.id_of("focus:s-1").unwrap();
        let quit = drawn.id_of("quit").unwrap();
        // Between the host's GetLayout and its Event, a session appears and s-1 ends.
        assert!(menu.replace(&lines_with(&["s-0", "s-2", "s-3"])));
        assert_eq!(menu.revision(), 2);
        assert!(menu.clicked(hook_log, "clicked"));
        assert!(
            !menu.clicked(session, "clicked"),
            "the ended session's line"
        );
        assert_eq!(*sent.lock().unwrap(), vec!["open-hook-log".to_string()]);
        assert!(
            !sent.lock().unwrap().iter().any(|c| c == "quit"),
            "Quit ({quit}) never runs for another item"
        );
    }

    #[test]
    fn an_info_line_is_disabled_and_clicks_on_it_or_a_separator_send_nothing() {
        let (sent, menu) = recording();
        let root = menu.tree().items[&ROOT].children.clone();
        assert!(menu.clicked(root[0], "clicked"), "the info line exists");
        assert!(menu.clicked(root[1], "clicked"), "the separator exists");
        assert!(menu.clicked(root[2], "hovered"));
        assert!(sent.lock().unwrap().is_empty());
        assert!(menu.clicked(root[2], "clicked"));
        assert!(!menu.clicked(99_999, "clicked"));
        assert_eq!(*sent.lock().unwrap(), vec!["focus:s-1".to_string()]);
    }

    #[test]
    fn properties_follow_the_kind_and_the_names_asked_for() {
        let tree = Tree::of(&lines_with(&[]), &mut Ids::default());
        let root = &tree.items[&ROOT].children;
        let sep = tree.properties(root[1], &[]);
        assert_eq!(
            sep.get("type"),
            Some(&Variant::from("separator".to_string()))
        );
        assert!(!sep.contains_key("label"));
        let sub = tree.properties(root[3], &[]);
        assert_eq!(
            sub.get("children-display"),
            Some(&Variant::from("submenu".to_string()))
        );
        let quit = tree.id_of("quit").unwrap();
        let only_label = tree.properties(quit, &["label".to_string()]);
        assert_eq!(only_label.len(), 1);
        assert_eq!(
            only_label.get("label"),
            Some(&Variant::from("Quit".to_string()))
        );
    }

    #[test]
    fn a_changed_menu_gets_a_new_revision_and_the_same_one_does_not() {
        let (_, mut menu) = recording();
        assert!(!menu.replace(&lines_with(&["s-1"])));
        assert_eq!(menu.revision(), 1);
        assert!(menu.replace(&lines_with(&[])));
        assert_eq!(menu.revision(), 2);
    }

    #[test]
    fn layouts_nest_and_stop_at_the_depth_asked_for() {
        let tree = Tree::of(&lines_with(&["s-1"]), &mut Ids::default());
        let whole = tree.layout(ROOT, None, &[]).unwrap();
        assert_eq!(whole.children.len(), 7);
        let shallow = tree.layout(ROOT, Some(0), &[]).unwrap();
        assert!(shallow.children.is_empty());
        let submenu = tree.items[&ROOT].children[4];
        assert_eq!(tree.layout(submenu, None, &[]).unwrap().children.len(), 1);
        assert!(tree.layout(42_000, None, &[]).is_none());
    }

    #[test]
    fn texts_from_outside_reach_the_bus_clean() {
        let tree = Tree::of(
            &[
                MenuLine::Info("Fabric: running at http://a\0b".into()),
                MenuLine::Session {
                    label: format!("pro\0ject\u{1b} · {}", "x".repeat(10_000)),
                    session: "s".into(),
                },
            ],
            &mut Ids::default(),
        );
        for item in tree.items.values() {
            assert!(
                !item.label.chars().any(char::is_control),
                "{:?}",
                item.label
            );
            assert!(item.label.chars().count() <= safe_text::LINE_MAX_CHARS);
        }
    }

    #[test]
    fn group_calls_are_bounded_and_answer_each_item_once() {
        let (sent, menu) = recording();
        let quit = menu.tree().id_of("quit").unwrap();
        let flood = vec![quit; 4_000_000];
        assert!(matches!(
            menu.get_group_properties(flood, Vec::new()),
            Err(zbus::fdo::Error::LimitsExceeded(_))
        ));
        let repeated = vec![quit; MAX_GROUP];
        let answer = menu.get_group_properties(repeated, Vec::new()).unwrap();
        assert_eq!(answer.len(), 1, "one answer per item");
        let names = vec!["label".to_string(); MAX_PROPERTY_NAMES + 1];
        assert!(menu.get_group_properties(vec![quit], names).is_err());
        let event = || (quit, "clicked".to_string(), OwnedVariant::from(0u8), 0u32);
        assert!(menu.event_group(vec![event(); MAX_GROUP + 1]).is_err());
        assert!(
            sent.lock().unwrap().is_empty(),
            "a refused group presses nothing"
        );
        let missing = menu
            .event_group(vec![
                event(),
                event(),
                (77_777, "clicked".into(), OwnedVariant::from(0u8), 0),
            ])
            .unwrap();
        assert_eq!(missing, vec![77_777]);
        assert_eq!(
            *sent.lock().unwrap(),
            vec!["quit".to_string()],
            "pressed once"
        );
    }
}
