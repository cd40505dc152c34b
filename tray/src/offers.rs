//! The first-run offer to set up hooks (issue 10, item 3), as a pure rule: which hosts the
//! tray offers "Set up hooks for <host>…" for, and when it raises the one notification.
//!
//! A host is offered when it is on this machine with `fabric` registered (its config holds the
//! registration, so its config folder is there) and none of our hooks are in its config, and
//! the person has not dismissed the offer for it (kept in the settings file,
//! `dismissedHookOffers`). The menu items stay while the offer holds; the notification is
//! raised once per host per tray run, never while notifications are muted. Accepting starts
//! `fabric-companion --view hooks --host <host>`: the Hooks view on that host's install plan,
//! where nothing is written without the person's confirmation. This module decides only: it
//! never reads a file, writes the settings or notifies (the shell does).
//!
//! An install from before the state events (some of our events missing: `incomplete`) is
//! offered the update the same way, "Update hooks for <host>…" in the menu (no notification):
//! the Hooks view's plan then shows just the added entries.

use std::collections::BTreeSet;

use companion_hosts::host::Host;
use companion_hosts::install::HookStateKind;

use crate::model::{Action, MenuLine, Snapshot};

/// The menu item's label for an offer.
pub fn offer_label(host: Host) -> String {
    format!("Set up hooks for {}…", host.display_name())
}

/// The hosts offered now, in the snapshot's order.
pub fn offered(snapshot: &Snapshot, dismissed: &BTreeSet<Host>) -> Vec<Host> {
    snapshot
        .hosts
        .iter()
        .filter(|h| h.registered && h.hooks == HookStateKind::NotInstalled)
        .map(|h| h.host)
        .filter(|host| !dismissed.contains(host))
        .collect()
}

/// The menu item's label for an update.
pub fn update_label(host: Host) -> String {
    format!("Update hooks for {}…", host.display_name())
}

/// The hosts whose hooks are installed without some of our events (an older install).
pub fn updatable(snapshot: &Snapshot) -> Vec<Host> {
    snapshot
        .hosts
        .iter()
        .filter(|h| h.hooks == HookStateKind::Incomplete)
        .map(|h| h.host)
        .collect()
}

/// `menu` with "Update hooks for <host>…" per host before "Open Dashboard…".
pub fn with_updates(menu: Vec<MenuLine>, hosts: &[Host]) -> Vec<MenuLine> {
    if hosts.is_empty() {
        return menu;
    }
    let at = menu
        .iter()
        .position(|line| {
            matches!(
                line,
                MenuLine::Item {
                    action: Action::OpenDashboard,
                    ..
                }
            )
        })
        .unwrap_or(menu.len());
    let mut items: Vec<MenuLine> = hosts
        .iter()
        .map(|&host| MenuLine::Item {
            label: update_label(host),
            action: Action::SetUpHooks(host),
            enabled: true,
        })
        .collect();
    items.push(MenuLine::Separator);
    let mut menu = menu;
    menu.splice(at..at, items);
    menu
}

/// What to do about offers on one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferDecision {
    /// The hosts to show the menu item for.
    pub menu: Vec<Host>,
    /// The hosts to name in a notification now (empty: none this time).
    pub notify: Vec<Host>,
    /// The hosts notified so far in this tray run (the next call's `notified`).
    pub notified: BTreeSet<Host>,
}

/// The offers for `snapshot`: the menu items, and one notification for the offered hosts not
/// notified yet in this run (held back while notifications are muted).
pub fn decide_offers(
    snapshot: &Snapshot,
    dismissed: &BTreeSet<Host>,
    notified: &BTreeSet<Host>,
) -> OfferDecision {
    let menu = offered(snapshot, dismissed);
    let mut notified = notified.clone();
    let notify: Vec<Host> = if snapshot.notifications_muted {
        Vec::new()
    } else {
        menu.iter()
            .copied()
            .filter(|host| !notified.contains(host))
            .collect()
    };
    notified.extend(notify.iter().copied());
    OfferDecision {
        menu,
        notify,
        notified,
    }
}

/// `menu` with the offers' items put before "Open Dashboard…": per host, "Set up hooks for
/// <host>…" and "Don't offer again for <host>", then a separator.
pub fn with_offers(menu: Vec<MenuLine>, offered: &[Host]) -> Vec<MenuLine> {
    if offered.is_empty() {
        return menu;
    }
    let at = menu
        .iter()
        .position(|line| {
            matches!(
                line,
                MenuLine::Item {
                    action: Action::OpenDashboard,
                    ..
                }
            )
        })
        .unwrap_or(menu.len());
    let mut items = Vec::new();
    for &host in offered {
        items.push(MenuLine::Item {
            label: offer_label(host),
            action: Action::SetUpHooks(host),
            enabled: true,
        });
        items.push(MenuLine::Item {
            label: format!("Don't offer again for {}", host.display_name()),
            action: Action::DismissOffer(host),
            enabled: true,
        });
    }
    items.push(MenuLine::Separator);
    let mut menu = menu;
    menu.splice(at..at, items);
    menu
}

/// The notification's summary and body for the hosts in `notify`.
pub fn offer_notification(notify: &[Host]) -> (String, String) {
    let names: Vec<&str> = notify.iter().map(|h| h.display_name()).collect();
    (
        "Set up Fabric's session hooks?".to_string(),
        format!(
            "{} {} Fabric registered but not our hooks. The tray's menu shows the exact change; nothing is written until you confirm.",
            names.join(" and "),
            if names.len() == 1 { "has" } else { "have" }
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::host;
    use crate::model::{self, HostView};

    /// The model's test snapshot with these hosts and notifications muted or not.
    fn snapshot(hosts: Vec<HostView>, muted: bool) -> Snapshot {
        Snapshot {
            hosts,
            notifications_muted: muted,
            ..model::tests::snapshot(Vec::new())
        }
    }

    #[test]
    fn an_older_install_is_offered_the_update() {
        let s = snapshot(
            vec![
                host(Host::Claude, true, HookStateKind::Incomplete),
                host(Host::Codex, true, HookStateKind::Installed),
                host(Host::Kimi, false, HookStateKind::Incomplete),
            ],
            false,
        );
        assert_eq!(updatable(&s), [Host::Claude, Host::Kimi]);
        let menu = with_updates(crate::model::menu_lines(&s, 0), &updatable(&s));
        assert!(menu.contains(&MenuLine::Item {
            label: "Update hooks for Claude Code…".into(),
            action: Action::SetUpHooks(Host::Claude),
            enabled: true,
        }));
        // Nothing is offered twice: an update is not a first-run offer.
        assert!(offered(&s, &BTreeSet::new()).is_empty());
    }

    #[test]
    fn only_registered_hosts_without_our_hooks_are_offered() {
        let s = snapshot(
            vec![
                host(Host::Claude, true, HookStateKind::NotInstalled),
                host(Host::Codex, true, HookStateKind::Installed),
                host(Host::Kimi, false, HookStateKind::NotInstalled),
            ],
            false,
        );
        assert_eq!(offered(&s, &BTreeSet::new()), vec![Host::Claude]);
        for kind in [
            HookStateKind::Stale,
            HookStateKind::Incomplete,
            HookStateKind::Installed,
        ] {
            let s = snapshot(vec![host(Host::Codex, true, kind)], false);
            assert!(offered(&s, &BTreeSet::new()).is_empty(), "{kind:?}");
        }
    }

    #[test]
    fn a_dismissed_offer_stays_dismissed() {
        let s = snapshot(
            vec![
                host(Host::Claude, true, HookStateKind::NotInstalled),
                host(Host::Codex, true, HookStateKind::NotInstalled),
            ],
            false,
        );
        let dismissed = BTreeSet::from([Host::Codex]);
        let d = decide_offers(&s, &dismissed, &BTreeSet::new());
        assert_eq!(d.menu, vec![Host::Claude]);
        assert_eq!(d.notify, vec![Host::Claude]);
    }

    #[test]
    fn one_notification_per_host_per_run_and_none_while_muted() {
        let hosts = vec![host(Host::Codex, true, HookStateKind::NotInstalled)];
        let muted = decide_offers(
            &snapshot(hosts.clone(), true),
            &BTreeSet::new(),
            &BTreeSet::new(),
        );
        assert_eq!(
            muted.menu,
            vec![Host::Codex],
            "the menu item shows while muted"
        );
        assert!(muted.notify.is_empty());
        let first = decide_offers(
            &snapshot(hosts.clone(), false),
            &BTreeSet::new(),
            &muted.notified,
        );
        assert_eq!(first.notify, vec![Host::Codex]);
        let second = decide_offers(
            &snapshot(hosts.clone(), false),
            &BTreeSet::new(),
            &first.notified,
        );
        assert!(second.notify.is_empty(), "once per run");
        assert_eq!(second.menu, vec![Host::Codex]);
        // A host found later (say Claude Code registered fabric meanwhile) is notified once.
        let mut more = hosts;
        more.push(host(Host::Claude, true, HookStateKind::NotInstalled));
        let third = decide_offers(&snapshot(more, false), &BTreeSet::new(), &second.notified);
        assert_eq!(third.notify, vec![Host::Claude]);
    }

    #[test]
    fn offers_go_before_open_dashboard_and_their_ids_round_trip() {
        let s = snapshot(
            vec![host(Host::Codex, true, HookStateKind::NotInstalled)],
            false,
        );
        let menu = with_offers(crate::model::menu_lines(&s, 0), &[Host::Codex]);
        let labels: Vec<String> = menu
            .iter()
            .filter_map(|l| match l {
                MenuLine::Item { label, .. } => Some(label.clone()),
                _ => None,
            })
            .collect();
        let at = labels
            .iter()
            .position(|l| l == "Set up hooks for Codex…")
            .unwrap();
        assert_eq!(labels[at + 1], "Don't offer again for Codex");
        assert_eq!(labels[at + 2], "Open Dashboard…");
        for host in Host::ALL {
            for action in [Action::SetUpHooks(host), Action::DismissOffer(host)] {
                assert_eq!(Action::from_id(action.id()), Some(action));
            }
        }
        let plain = crate::model::menu_lines(&s, 0);
        assert_eq!(with_offers(plain.clone(), &[]), plain);
    }

    #[test]
    fn labels_and_the_notification_name_the_hosts() {
        assert_eq!(offer_label(Host::Codex), "Set up hooks for Codex…");
        let (summary, body) = offer_notification(&[Host::Claude, Host::Codex]);
        assert!(summary.contains("hooks"));
        assert!(
            body.starts_with("Claude Code and Codex have Fabric registered"),
            "{body}"
        );
        assert!(body.contains("nothing is written until you confirm"));
    }
}
