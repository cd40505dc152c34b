//! The tray item itself as `org.kde.StatusNotifierItem`: the icon's pixels (the count drawn
//! in, as on every other path), the tooltip, and the pointer to the menu. The host draws the
//! icon and opens the menu on a click (`ItemIsMenu`). It counts the hosts' reads of its `Id`
//! (every host reads it to show an item), so the registration can tell an item no host
//! looked at.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use zbus::object_server::SignalEmitter;

use crate::icon;
use crate::model::IconState;

/// The object path of the item.
pub const ITEM_PATH: &str = "/StatusNotifierItem";

/// The sizes the icon is offered in (hosts pick the nearest).
const SIZES: [u32; 2] = [32, 64];

/// One pixmap: width, height, ARGB32 pixels in network byte order.
pub type Pixmap = (i32, i32, Vec<u8>);

/// The icon in each offered size.
pub fn pixmaps(state: &IconState) -> Vec<Pixmap> {
    SIZES
        .iter()
        .map(|&size| {
            let img = icon::render(state, size);
            (img.width as i32, img.height as i32, argb(&img.pixels))
        })
        .collect()
}

/// RGBA bytes to ARGB32 in network byte order (A, R, G, B per pixel).
pub fn argb(rgba: &[u8]) -> Vec<u8> {
    rgba.chunks_exact(4)
        .flat_map(|p| [p[3], p[0], p[1], p[2]])
        .collect()
}

/// What the item shows.
pub struct Item {
    pub icon: Vec<Pixmap>,
    /// The tooltip's text under the title (e.g. the count).
    pub tooltip: String,
    /// What a screen reader says for the icon (`IconAccessibleDesc`,
    /// `AttentionAccessibleDesc`): the count and whether a session needs you.
    pub accessible: String,
    /// How many times a host read `Id` (shared with the registration task).
    pub reads: Arc<AtomicU64>,
}

#[zbus::interface(name = "org.kde.StatusNotifierItem")]
impl Item {
    /// A click: the menu is the item (`ItemIsMenu`); hosts that call this anyway take the
    /// "unknown method" answer as "show the menu" (GNOME's AppIndicator extension and
    /// Plasma before 6.4 rely on that).
    fn activate(&self, _x: i32, _y: i32) -> zbus::fdo::Result<()> {
        Err(zbus::fdo::Error::UnknownMethod("ItemIsMenu".into()))
    }

    /// The host draws the menu itself from `Menu`.
    fn context_menu(&self, _x: i32, _y: i32) -> zbus::fdo::Result<()> {
        Err(zbus::fdo::Error::UnknownMethod("ItemIsMenu".into()))
    }

    fn secondary_activate(&self, _x: i32, _y: i32) {}

    fn scroll(&self, _delta: i32, _orientation: String) {}

    #[zbus(property)]
    fn category(&self) -> String {
        "ApplicationStatus".into()
    }

    #[zbus(property)]
    fn id(&self) -> String {
        self.reads.fetch_add(1, Ordering::Relaxed);
        "fabric-tray".into()
    }

    #[zbus(property)]
    fn title(&self) -> String {
        "Fabric Companion".into()
    }

    #[zbus(property)]
    fn status(&self) -> String {
        "Active".into()
    }

    #[zbus(property)]
    fn window_id(&self) -> i32 {
        0
    }

    #[zbus(property)]
    fn icon_name(&self) -> String {
        String::new()
    }

    #[zbus(property)]
    fn icon_pixmap(&self) -> Vec<Pixmap> {
        self.icon.clone()
    }

    #[zbus(property)]
    fn overlay_icon_name(&self) -> String {
        String::new()
    }

    #[zbus(property)]
    fn overlay_icon_pixmap(&self) -> Vec<Pixmap> {
        Vec::new()
    }

    #[zbus(property)]
    fn attention_icon_name(&self) -> String {
        String::new()
    }

    #[zbus(property)]
    fn attention_icon_pixmap(&self) -> Vec<Pixmap> {
        Vec::new()
    }

    #[zbus(property)]
    fn attention_movie_name(&self) -> String {
        String::new()
    }

    #[zbus(property)]
    fn icon_theme_path(&self) -> String {
        String::new()
    }

    #[zbus(property)]
    fn tool_tip(&self) -> (String, Vec<Pixmap>, String, String) {
        (
            String::new(),
            Vec::new(),
            "Fabric Companion".into(),
            self.tooltip.clone(),
        )
    }

    /// The icon's description for screen readers (an AppIndicator extension asks for it on
    /// every `NewIcon`, and logs "Unknown property" when an item lacks it).
    #[zbus(property)]
    fn icon_accessible_desc(&self) -> String {
        self.accessible.clone()
    }

    /// The same for the attention icon (asked on `NewAttentionIcon`).
    #[zbus(property)]
    fn attention_accessible_desc(&self) -> String {
        self.accessible.clone()
    }

    #[zbus(property)]
    fn item_is_menu(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn menu(&self) -> zbus::OwnedObjectPath {
        zbus::OwnedObjectPath::try_from(super::menu::MENU_PATH).expect("a valid object path")
    }

    #[zbus(signal)]
    pub async fn new_icon(emitter: &SignalEmitter<'_>) -> zbus::Result<()>;

    #[zbus(signal)]
    pub async fn new_tool_tip(emitter: &SignalEmitter<'_>) -> zbus::Result<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixels_go_out_as_argb_in_network_order() {
        assert_eq!(
            argb(&[1, 2, 3, 4, 5, 6, 7, 8]),
            vec![4, 1, 2, 3, 8, 5, 6, 7]
        );
    }

    #[test]
    fn the_count_changes_the_pixmaps_and_each_size_is_whole() {
        let none = pixmaps(&IconState::default());
        let some = pixmaps(&IconState {
            count_text: "7".into(),
            ..IconState::default()
        });
        assert_eq!(none.len(), SIZES.len());
        for (w, h, data) in &none {
            assert_eq!(data.len(), (*w * *h * 4) as usize);
        }
        assert_ne!(none, some);
    }
}
