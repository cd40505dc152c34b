//! The tray-icon shell: the tao event loop, the tray icon and its menu (tray-icon + muda).
//! GTK with AppIndicator or XEmbed on Linux (its own program there, `fabric-tray-xembed`, so
//! the GTK-free StatusNotifierItem path never loads GTK), the menu bar on macOS, the
//! notification area on Windows.
//!
//! On Windows the icon's clicks and balloons are [`windows`]'s: tray-icon shows its own menu
//! only where `Shell_NotifyIconGetRect` answers, which Wine's does not.
//!
//! It only applies a [`TrayView`]: the icon is replaced only when its state changes, the
//! menu is rebuilt only when its lines change. Everything that decides is the controller's
//! and the model's.

use std::sync::Arc;

use companion_platform::paths::Paths;
use tao::event::{Event, StartCause};
use tao::event_loop::{ControlFlow, EventLoopBuilder};
use tao::platform::run_return::EventLoopExtRunReturn;
use tray_icon::menu::{IsMenuItem, Menu, MenuEvent, MenuItem, PredefinedMenuItem, Submenu};
use tray_icon::{TrayIcon, TrayIconBuilder};

use crate::background::Background;
use crate::controller::{Controller, EventSink, Flow, Surface, UserEvent};
use crate::model::{Choice, MenuLine, TrayView};

#[cfg(windows)]
mod windows;
use crate::{icon, safe_text};

/// Runs the tray until Quit.
pub fn run_loop(paths: Paths) -> anyhow::Result<()> {
    let mut event_loop = EventLoopBuilder::<UserEvent>::with_user_event().build();
    #[cfg(target_os = "macos")]
    {
        use tao::platform::macos::{ActivationPolicy, EventLoopExtMacOS};
        event_loop.set_activation_policy(ActivationPolicy::Accessory);
    }
    let proxy = event_loop.create_proxy();
    let send: EventSink = Arc::new(move |event| {
        let _ = proxy.send_event(event);
    });
    let menu_send = Arc::clone(&send);
    MenuEvent::set_event_handler(Some(move |event: MenuEvent| {
        menu_send(UserEvent::Menu(event.id.0));
    }));
    let mut controller = Controller::start(paths, send, Box::new(TrayIconSurface { tray: None }))?;
    event_loop.run_return(move |event, _target, control_flow| {
        *control_flow = ControlFlow::Wait;
        let flow = match event {
            Event::NewEvents(StartCause::Init) => controller.handle(UserEvent::Refresh),
            Event::UserEvent(event) => controller.handle(event),
            Event::LoopDestroyed => {
                controller.stop();
                Flow::Continue
            }
            _ => Flow::Continue,
        };
        if flow == Flow::Quit {
            *control_flow = ControlFlow::Exit;
        }
    });
    Ok(())
}

/// The tray icon (made at the first view, on the event loop's thread).
struct TrayIconSurface {
    tray: Option<TrayIcon>,
}

impl Surface for TrayIconSurface {
    fn show(&mut self, _background: &Background, previous: Option<&TrayView>, view: &TrayView) {
        let Some(tray) = &self.tray else {
            match build_tray(view) {
                Ok(tray) => {
                    #[cfg(windows)]
                    {
                        windows::attach(&tray);
                        windows::set_menu(build_menu(&view.menu));
                    }
                    self.tray = Some(tray);
                }
                Err(error) => tracing::error!(%error, "cannot create the tray icon"),
            }
            return;
        };
        if previous.map(|v| &v.icon) != Some(&view.icon) {
            tracing::debug!(icon = ?view.icon, "icon changed");
            #[cfg(target_os = "macos")]
            let result = tray.set_icon_with_as_template(Some(tray_icon_of(view)), true);
            #[cfg(not(target_os = "macos"))]
            let result = tray.set_icon(Some(tray_icon_of(view)));
            if let Err(error) = result {
                tracing::warn!(%error, "cannot update the tray icon");
            }
        }
        if previous.map(|v| &v.menu) != Some(&view.menu) {
            #[cfg(windows)]
            windows::set_menu(build_menu(&view.menu));
            #[cfg(not(windows))]
            tray.set_menu(Some(Box::new(build_menu(&view.menu))));
        }
        #[cfg(target_os = "macos")]
        if previous.map(|v| &v.title) != Some(&view.title) {
            tray.set_title(view.title.as_deref());
        }
    }

    fn close(&mut self) {
        self.tray = None;
    }
}

fn tray_icon_of(view: &TrayView) -> tray_icon::Icon {
    let img = icon::render(&view.icon, icon::TRAY_SIZE);
    #[cfg(target_os = "macos")]
    let img = icon::template(&img);
    // The size and buffer always agree, so this cannot fail; fall back to an empty icon.
    tray_icon::Icon::from_rgba(img.pixels, img.width, img.height).unwrap_or_else(|_| {
        tray_icon::Icon::from_rgba(vec![0; 4], 1, 1).expect("a 1×1 icon is valid")
    })
}

fn build_tray(view: &TrayView) -> tray_icon::Result<TrayIcon> {
    let builder = TrayIconBuilder::new()
        .with_id("fabric-tray")
        .with_icon(tray_icon_of(view))
        .with_tooltip("Fabric Companion");
    // Windows: the menu is shown by `windows` at the click, never by tray-icon.
    #[cfg(not(windows))]
    let builder = builder
        .with_menu(Box::new(build_menu(&view.menu)))
        // Left-click shows the same menu everywhere (GTK trays do so anyway): no surprise.
        .with_menu_on_left_click(true);
    #[cfg(target_os = "macos")]
    let builder = builder
        .with_icon_as_template(true)
        .with_title(view.title.clone().unwrap_or_default());
    builder.build()
}

fn menu_items(lines: &[MenuLine]) -> Vec<Box<dyn IsMenuItem>> {
    lines
        .iter()
        .map(|line| -> Box<dyn IsMenuItem> {
            match line {
                MenuLine::Info(text) => Box::new(MenuItem::new(label_of(text), false, None)),
                MenuLine::Session { label, session } => Box::new(MenuItem::with_id(
                    Choice::Focus(session.clone()).id(),
                    label_of(label),
                    true,
                    None,
                )),
                MenuLine::Separator => Box::new(PredefinedMenuItem::separator()),
                MenuLine::Item {
                    label,
                    action,
                    enabled,
                } => Box::new(MenuItem::with_id(
                    action.id(),
                    label_of(label),
                    *enabled,
                    None,
                )),
                MenuLine::Submenu { label, items } => {
                    let submenu = Submenu::new(label_of(label), true);
                    for item in menu_items(items) {
                        let _ = submenu.append(item.as_ref());
                    }
                    Box::new(submenu)
                }
            }
        })
        .collect()
}

/// A label as the toolkit gets it: clean and bounded (a NUL would cut it, or worse), and
/// with `&` doubled (muda takes a single one as a mnemonic marker).
fn label_of(text: &str) -> String {
    safe_text::label(text).replace('&', "&&")
}

fn build_menu(lines: &[MenuLine]) -> Menu {
    let menu = Menu::new();
    for item in menu_items(lines) {
        let _ = menu.append(item.as_ref());
    }
    menu
}
