//! Whether a host will run the hooks of ours it has in its config, read from the host's own
//! record of the person's approval — never guessed, never written: approving a hook is the
//! person's act, in the host (Codex: its `/hooks` screen).
//!
//! Claude Code and Kimi Code run every configured hook: [`Approval::NotNeeded`]. Codex runs a
//! hook only once the person approved that exact definition at that place in `hooks.json`
//! ([`codex`] computes Codex's key and hash and reads its record). Nothing here prints or keeps
//! a value from a host's config beyond the few keys it reads.

pub mod codex;

use serde::Serialize;

use crate::host::Host;
use companion_platform::paths::Paths;

pub use codex::hooks_feature as codex_hooks_feature;

/// Where one hook of ours stands with the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum HookVerdict {
    /// Approved as it is now: the host runs it.
    Approved,
    /// Never approved at this place: the host skips it until the person approves it.
    Waiting,
    /// Approved once, but its definition at this place differs now: skipped until approved
    /// again.
    Changed,
    /// The person turned it off in the host.
    TurnedOff,
}

/// One hook of ours as the host sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct HookApproval {
    /// The host's event name (`SessionStart`, …).
    pub event: String,
    /// The host's key for the hook's record (Codex: `<hooks.json>:<event>:<group>:<handler>`).
    pub key: String,
    /// The host's hash of the hook's definition (Codex: `sha256:<hex>`).
    pub hash: String,
    pub verdict: HookVerdict,
    /// Not approved here, but approved as it is at another place in the file: an entry was
    /// added before ours, and the host ties an approval to the place.
    pub approved_elsewhere: bool,
}

/// Why the host runs none of its hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum HooksOff {
    /// Codex: `[features] hooks = false` (or the older `codex_hooks = false`) in `config.toml`.
    FeatureOff,
}

/// Whether a host runs our hooks, host-wide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(
    tag = "state",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
pub enum Approval {
    /// The host runs configured hooks without asking (Claude Code, Kimi Code).
    NotNeeded,
    /// Every hook of ours is approved and on.
    Approved,
    /// Some hooks of ours were never approved where they are (`events`: which).
    Waiting {
        events: Vec<String>,
        approved_elsewhere: bool,
    },
    /// Some hooks of ours changed since they were approved (`events`: which).
    Changed {
        events: Vec<String>,
        approved_elsewhere: bool,
    },
    /// Some hooks of ours are turned off in the host (`events`: which).
    TurnedOff { events: Vec<String> },
    /// The host runs no hooks at all.
    HooksOff { cause: HooksOff },
    /// The host's record could not be read (`reason`: why, never a value from the file).
    Unknown { reason: String },
}

impl Approval {
    /// The short word (`not-needed`, `approved`, `waiting`, `changed`, `turned-off`,
    /// `hooks-off`, `unknown`).
    pub fn word(&self) -> &'static str {
        match self {
            Approval::NotNeeded => "not-needed",
            Approval::Approved => "approved",
            Approval::Waiting { .. } => "waiting",
            Approval::Changed { .. } => "changed",
            Approval::TurnedOff { .. } => "turned-off",
            Approval::HooksOff { .. } => "hooks-off",
            Approval::Unknown { .. } => "unknown",
        }
    }

    /// Whether the host runs our hooks as installed (unknown counts as yes: we could not tell
    /// otherwise).
    pub fn runs(&self) -> bool {
        matches!(
            self,
            Approval::NotNeeded | Approval::Approved | Approval::Unknown { .. }
        )
    }

    /// What is left to do, in words for a person; `None` when nothing is.
    pub fn describe(&self, host: Host) -> Option<String> {
        let name = host.display_name();
        let which = |events: &[String]| {
            if events.len() >= 4 || events.is_empty() {
                String::new()
            } else {
                format!(" ({})", events.join(", "))
            }
        };
        const MOVED: &str = "; an entry was added before ours in hooks.json, and Codex ties an approval to the entry's place";
        match self {
            Approval::NotNeeded => None,
            Approval::Approved => Some(format!("approved in {name}")),
            Approval::Waiting {
                events,
                approved_elsewhere,
            } => Some(format!(
                "waiting for your approval in {name}: run /hooks{}{}",
                which(events),
                if *approved_elsewhere { MOVED } else { "" }
            )),
            Approval::Changed {
                events,
                approved_elsewhere,
            } => Some(format!(
                "changed since you approved it in {name}: run /hooks to approve it again{}{}",
                which(events),
                if *approved_elsewhere { MOVED } else { "" }
            )),
            Approval::TurnedOff { events } => Some(format!(
                "turned off in {name}: turn it on in /hooks{}",
                which(events)
            )),
            Approval::HooksOff {
                cause: HooksOff::FeatureOff,
            } => Some(format!(
                "{name} runs no hooks: its config.toml says [features] hooks = false"
            )),
            Approval::Unknown { reason } => Some(format!("approval in {name} unknown ({reason})")),
        }
    }
}

/// A host's approval of our hooks, with the hook-by-hook record behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HostApproval {
    #[serde(flatten)]
    pub approval: Approval,
    /// Each hook of ours, as the host keys it (empty where approval is not needed).
    pub hooks: Vec<HookApproval>,
}

/// Whether `host` runs the hooks of ours in its config, from its own record. `None` when its
/// config has no hook of ours (nothing to approve).
pub fn read(host: Host, paths: &Paths) -> Option<HostApproval> {
    match host {
        Host::Claude | Host::Kimi => Some(HostApproval {
            approval: Approval::NotNeeded,
            hooks: Vec::new(),
        }),
        Host::Codex => codex::read(paths),
    }
}

/// The host-wide verdict from the hook-by-hook one: what blocks most comes first (hooks off,
/// then turned off, changed, waiting).
pub(crate) fn summarise(hooks: &[HookApproval]) -> Approval {
    let pick = |verdict: HookVerdict| -> (Vec<String>, bool) {
        let chosen: Vec<&HookApproval> = hooks.iter().filter(|h| h.verdict == verdict).collect();
        (
            chosen.iter().map(|h| h.event.clone()).collect(),
            chosen.iter().any(|h| h.approved_elsewhere),
        )
    };
    let (off, _) = pick(HookVerdict::TurnedOff);
    if !off.is_empty() {
        return Approval::TurnedOff { events: off };
    }
    let (changed, elsewhere) = pick(HookVerdict::Changed);
    if !changed.is_empty() {
        return Approval::Changed {
            events: changed,
            approved_elsewhere: elsewhere,
        };
    }
    let (waiting, elsewhere) = pick(HookVerdict::Waiting);
    if !waiting.is_empty() {
        return Approval::Waiting {
            events: waiting,
            approved_elsewhere: elsewhere,
        };
    }
    Approval::Approved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(event: &str, verdict: HookVerdict) -> HookApproval {
        HookApproval {
            event: event.into(),
            key: format!("/h/hooks.json:{event}:0:0"),
            hash: "sha256:0".into(),
            verdict,
            approved_elsewhere: false,
        }
    }

    #[test]
    fn the_most_blocking_verdict_wins_and_says_what_is_left() {
        use HookVerdict::*;
        assert_eq!(summarise(&[hook("Stop", Approved)]), Approval::Approved);
        let waiting = summarise(&[hook("SessionStart", Approved), hook("Stop", Waiting)]);
        assert_eq!(
            waiting.describe(Host::Codex).unwrap(),
            "waiting for your approval in Codex: run /hooks (Stop)"
        );
        assert!(!waiting.runs());
        let changed = summarise(&[hook("Stop", Waiting), hook("SessionEnd", Changed)]);
        assert_eq!(changed.word(), "changed");
        let off = summarise(&[hook("Stop", TurnedOff), hook("SessionEnd", Changed)]);
        assert_eq!(
            off,
            Approval::TurnedOff {
                events: vec!["Stop".into()]
            }
        );
        let mut moved = hook("Stop", Waiting);
        moved.approved_elsewhere = true;
        let text = summarise(&[moved]).describe(Host::Codex).unwrap();
        assert!(text.contains("added before ours"), "{text}");
        assert_eq!(Approval::NotNeeded.describe(Host::Claude), None);
        assert!(Approval::NotNeeded.runs());
    }

    #[test]
    fn serialises_with_a_state_tag() {
        let value = serde_json::to_value(HostApproval {
            approval: Approval::Waiting {
                events: vec!["Stop".into()],
                approved_elsewhere: false,
            },
            hooks: vec![hook("Stop", HookVerdict::Waiting)],
        })
        .unwrap();
        assert_eq!(value["state"], "waiting");
        assert_eq!(value["events"][0], "Stop");
        assert_eq!(value["hooks"][0]["verdict"], "waiting");
        assert_eq!(value["approvedElsewhere"], false);
        assert_eq!(value["hooks"][0]["approvedElsewhere"], false);
    }
}
