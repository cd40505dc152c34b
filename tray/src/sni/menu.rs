//! The tray's menu as `com.canonical.dbusmenu` (the menu a StatusNotifierItem host draws):
//! the model's [`MenuLine`]s numbered into dbusmenu items, the interface that serves them, and
//! the `Event` calls that come back as the model's menu ids.
//!
//! Ids are positions: 0 is the root, then every line in order, depth first. A new menu gets a
//! new revision and a `LayoutUpdated` signal, so a host never acts on an id of an old menu
//! without having been told (an `Event` for an id the current menu lacks is refused).

use std::collections::HashMap;
use std::sync::Arc;

use zbus::object_server::SignalEmitter;
use zbus::wire::StructureBuilder;
use zbus::{OwnedVariant, Variant};

use crate::model::{Choice, MenuLine};

/// The object path of the menu.
pub const MENU_PATH: &str = "/MenuBar";

/// One dbusmenu item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub label: String,
    pub enabled: bool,
    pub separator: bool,
    /// The model's menu id a click on it sends (`None`: informs only).
    pub choice: Option<String>,
    /// Ids of its children (a submenu has some).
    pub children: Vec<i32>,
}

/// The numbered menu: `items[id]`, `items[0]` the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    pub items: Vec<Item>,
}

impl Tree {
    /// Numbers the model's lines.
    pub fn of(lines: &[MenuLine]) -> Tree {
        let mut items = vec![Item {
            label: String::new(),
            enabled: true,
            separator: false,
            choice: None,
            children: Vec::new(),
        }];
        let children = number(lines, &mut items);
        items[0].children = children;
        Tree { items }
    }

    fn get(&self, id: i32) -> Option<&Item> {
        usize::try_from(id).ok().and_then(|i| self.items.get(i))
    }

    /// The model's menu id of a clicked item, if it has one.
    pub fn choice_of(&self, id: i32) -> Option<&str> {
        self.get(id)?.choice.as_deref()
    }

    /// The item's properties (only the ones asked for, or all with an empty list).
    fn properties(&self, id: i32, names: &[String]) -> HashMap<String, Variant<'static>> {
        let Some(item) = self.get(id) else {
            return HashMap::new();
        };
        let mut all: Vec<(&str, Variant<'static>)> = Vec::new();
        if item.separator {
            all.push(("type", Variant::from("separator".to_string())));
        } else if id != 0 {
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

fn number(lines: &[MenuLine], items: &mut Vec<Item>) -> Vec<i32> {
    let mut ids = Vec::new();
    for line in lines {
        let id = items.len() as i32;
        ids.push(id);
        let (label, enabled, separator, choice) = match line {
            MenuLine::Info(text) => (text.clone(), false, false, None),
            MenuLine::Session { label, session } => (
                label.clone(),
                true,
                false,
                Some(Choice::Focus(session.clone()).id()),
            ),
            MenuLine::Separator => (String::new(), true, true, None),
            MenuLine::Item {
                label,
                action,
                enabled,
            } => (
                label.clone(),
                *enabled,
                false,
                Some(action.id().to_string()),
            ),
            MenuLine::Submenu { label, .. } => (label.clone(), true, false, None),
        };
        items.push(Item {
            label,
            enabled,
            separator,
            choice,
            children: Vec::new(),
        });
        if let MenuLine::Submenu { items: sub, .. } = line {
            let children = number(sub, items);
            items[id as usize].children = children;
        }
    }
    ids
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
    revision: u32,
    on_choice: Arc<dyn Fn(String) + Send + Sync>,
}

impl DbusMenu {
    pub fn new(tree: Tree, on_choice: Arc<dyn Fn(String) + Send + Sync>) -> Self {
        DbusMenu {
            tree,
            revision: 1,
            on_choice,
        }
    }

    /// Takes a new menu; true when it differs (the caller then signals `LayoutUpdated`).
    pub fn replace(&mut self, tree: Tree) -> bool {
        if tree == self.tree {
            return false;
        }
        self.tree = tree;
        self.revision += 1;
        true
    }

    pub fn revision(&self) -> u32 {
        self.revision
    }

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

#[zbus::interface(name = "com.canonical.dbusmenu")]
impl DbusMenu {
    fn get_layout(
        &self,
        parent_id: i32,
        recursion_depth: i32,
        property_names: Vec<String>,
    ) -> zbus::fdo::Result<(u32, Layout)> {
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
    ) -> Vec<(i32, HashMap<String, Variant<'static>>)> {
        let ids: Vec<i32> = if ids.is_empty() {
            (0..self.tree.items.len() as i32).collect()
        } else {
            ids
        };
        ids.into_iter()
            .filter(|&id| self.tree.get(id).is_some())
            .map(|id| (id, self.tree.properties(id, &property_names)))
            .collect()
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

    fn event_group(&self, events: Vec<(i32, String, OwnedVariant, u32)>) -> Vec<i32> {
        events
            .into_iter()
            .filter(|(id, event, _, _)| !self.clicked(*id, event))
            .map(|(id, ..)| id)
            .collect()
    }

    fn about_to_show(&self, _id: i32) -> bool {
        false
    }

    fn about_to_show_group(&self, _ids: Vec<i32>) -> (Vec<i32>, Vec<i32>) {
        (Vec::new(), Vec::new())
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

    fn lines() -> Vec<MenuLine> {
        vec![
            MenuLine::Info("Fabric: running".into()),
            MenuLine::Session {
                label: "alpha — 2 unread".into(),
                session: "s-1".into(),
            },
            MenuLine::Separator,
            MenuLine::Submenu {
                label: "Pause notifications".into(),
                items: vec![MenuLine::Item {
                    label: "For an hour".into(),
                    action: Action::PauseHour,
                    enabled: true,
                }],
            },
            MenuLine::Item {
                label: "Quit".into(),
                action: Action::Quit,
                enabled: true,
            },
        ]
    }

    #[test]
    fn lines_are_numbered_depth_first_with_their_choices() {
        let tree = Tree::of(&lines());
        assert_eq!(tree.items[0].children, vec![1, 2, 3, 4, 6]);
        assert_eq!(tree.items[4].children, vec![5]);
        assert_eq!(tree.choice_of(1), None, "an info line");
        assert_eq!(tree.choice_of(2), Some("focus:s-1"));
        assert_eq!(tree.choice_of(5), Some(Action::PauseHour.id()));
        assert_eq!(tree.choice_of(6), Some(Action::Quit.id()));
        assert_eq!(tree.choice_of(0), None);
        assert!(tree.items[3].separator);
        assert!(!tree.items[1].separator);
        assert!(tree.get(7).is_none() && tree.get(-1).is_none());
    }

    #[test]
    fn an_info_line_is_disabled_and_clicks_on_it_or_a_separator_send_nothing() {
        let sent = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = Arc::clone(&sent);
        let menu = DbusMenu::new(
            Tree::of(&lines()),
            Arc::new(move |choice| sink.lock().unwrap().push(choice)),
        );
        assert!(menu.clicked(1, "clicked"), "the info line exists");
        assert!(menu.clicked(3, "clicked"), "the separator exists");
        assert!(menu.clicked(2, "hovered"));
        assert!(menu.clicked(2, "clicked"));
        assert!(menu.clicked(6, "clicked"));
        assert!(!menu.clicked(99, "clicked"));
        assert_eq!(
            *sent.lock().unwrap(),
            vec!["focus:s-1".to_string(), Action::Quit.id().to_string()]
        );
        let info = Tree::of(&[MenuLine::Info("x".into())]);
        assert!(!info.items[1].enabled);
    }

    #[test]
    fn properties_follow_the_kind_and_the_names_asked_for() {
        let tree = Tree::of(&lines());
        let sep = tree.properties(3, &[]);
        assert_eq!(
            sep.get("type"),
            Some(&Variant::from("separator".to_string()))
        );
        assert!(!sep.contains_key("label"));
        let sub = tree.properties(4, &[]);
        assert_eq!(
            sub.get("children-display"),
            Some(&Variant::from("submenu".to_string()))
        );
        let only_label = tree.properties(6, &["label".to_string()]);
        assert_eq!(only_label.len(), 1);
        assert_eq!(
            only_label.get("label"),
            Some(&Variant::from("Quit".to_string()))
        );
    }

    #[test]
    fn a_changed_menu_gets_a_new_revision_and_the_same_one_does_not() {
        let mut menu = DbusMenu::new(Tree::of(&lines()), Arc::new(|_| {}));
        assert!(!menu.replace(Tree::of(&lines())));
        assert_eq!(menu.revision(), 1);
        assert!(menu.replace(Tree::of(&lines()[1..])));
        assert_eq!(menu.revision(), 2);
    }

    #[test]
    fn layouts_nest_and_stop_at_the_depth_asked_for() {
        let tree = Tree::of(&lines());
        let whole = tree.layout(0, None, &[]).unwrap();
        assert_eq!(whole.children.len(), 5);
        let shallow = tree.layout(0, Some(0), &[]).unwrap();
        assert!(shallow.children.is_empty());
        let sub = tree.layout(4, None, &[]).unwrap();
        assert_eq!(sub.children.len(), 1);
        assert!(tree.layout(42, None, &[]).is_none());
    }
}
