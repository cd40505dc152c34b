//! Which [`Signal`] a host's hook event gives the session's state ([`companion_sessions::session_state`]),
//! from the event and the few fields of its input we read: which agent sent it (the session's
//! own, or a subagent by its `agent_id`; a notification without one is unattributed), the
//! tool's name, Claude Code's `notification_type`. Verified against the pinned hosts
//! (`tests/real-hosts`; the README's tables say which events each host has):
//!
//! | event | signal |
//! |---|---|
//! | SessionStart (`compact`: nothing) | start |
//! | UserPromptSubmit (a subagent's own: nothing) | prompt |
//! | PermissionRequest | ask: `question` for `AskUserQuestion`/`request_user_input`, else `permission` |
//! | PreToolUse (installed for Kimi Code's `AskUserQuestion` only) | ask: `question` |
//! | Notification `permission_prompt`, `worker_permission_prompt` | ask: `permission` |
//! | Notification `elicitation_dialog`, `elicitation_url_dialog` | ask: `question` |
//! | Notification `elicitation_response`, `elicitation_complete` | answered |
//! | Notification `idle_prompt` | the host is idle at its prompt |
//! | Notification of another known type | nothing |
//! | PostToolUse, PostToolUseFailure, PermissionResult (Kimi Code) | answered |
//! | PostToolUseFailure with `is_interrupt` (Claude Code) | interrupt |
//! | Stop / StopFailure / Interrupt / SubagentStop | the same |

use companion_sessions::session_state::{Agent, Signal, ToolName, WaitReason};

use crate::hook_input::{HookInput, Unexpected};
use crate::hooks::HookEvent;

/// The tools that ask the person a question (Claude Code and Kimi Code, Codex).
const QUESTION_TOOLS: &[&str] = &["AskUserQuestion", "request_user_input"];

/// Claude Code's notification types that say nothing about the session's own turn.
const QUIET_NOTIFICATIONS: &[&str] = &[
    "auth_success",
    "auth_storage_failure",
    "agent_completed",
    "agent_needs_input",
    "computer_use_exit",
    "plugin_notification",
    "push_notification",
];

/// Whose a notification is: Claude Code's name no agent unless an `agent_id` rides along.
fn notified_by(input: &HookInput) -> Agent {
    if input.agent_id.is_some() {
        input.agent()
    } else {
        Agent::Unnamed
    }
}

fn asked(input: &HookInput, by_tool: bool) -> Signal {
    let tool = input.tool_name.as_deref().and_then(ToolName::new);
    let question = by_tool
        && input
            .tool_name
            .as_deref()
            .is_some_and(|t| QUESTION_TOOLS.contains(&t));
    Signal::Ask {
        reason: if question {
            WaitReason::Question
        } else {
            WaitReason::Permission
        },
        tool,
        agent: if by_tool {
            input.agent()
        } else {
            notified_by(input)
        },
    }
}

/// The signal of `event`, `None` when it gives none, or why the input is not what we expect.
pub fn signal(event: HookEvent, input: &HookInput) -> Result<Option<Signal>, Unexpected> {
    let agent = input.agent();
    Ok(Some(match event {
        HookEvent::SessionStart => match input.source.as_deref() {
            Some("compact") => Signal::Compact,
            _ => Signal::Start,
        },
        HookEvent::UserPromptSubmit => Signal::Prompt { agent },
        HookEvent::PermissionRequest => asked(input, true),
        HookEvent::PreToolUse => match input.tool_name.as_deref() {
            Some(tool) if QUESTION_TOOLS.contains(&tool) => asked(input, true),
            _ => return Ok(None),
        },
        HookEvent::Notification => {
            let kind = input
                .notification_type
                .as_deref()
                .ok_or(Unexpected::NoNotificationType)?;
            match kind {
                "permission_prompt" => asked(input, false),
                "worker_permission_prompt" => Signal::Ask {
                    reason: WaitReason::Permission,
                    tool: None,
                    agent: notified_by(input),
                },
                "elicitation_dialog" | "elicitation_url_dialog" => Signal::Ask {
                    reason: WaitReason::Question,
                    tool: None,
                    agent,
                },
                "elicitation_response" | "elicitation_complete" => Signal::Answered { agent },
                "idle_prompt" => Signal::HostIdle,
                known if QUIET_NOTIFICATIONS.contains(&known) => return Ok(None),
                _ => return Err(Unexpected::UnknownNotificationType),
            }
        }
        HookEvent::PostToolUseFailure
            if input.is_interrupt == Some(true) && agent == Agent::Main =>
        {
            Signal::Interrupt
        }
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure | HookEvent::PermissionResult => {
            Signal::Answered { agent }
        }
        HookEvent::Stop => Signal::Stop,
        HookEvent::StopFailure => Signal::StopFailure,
        HookEvent::Interrupt => Signal::Interrupt,
        HookEvent::SubagentStop => Signal::SubagentStop {
            agent: input.subagent_id(),
        },
        HookEvent::SessionEnd => return Ok(None),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use companion_sessions::session_state::AgentId;

    fn input(json: &str) -> HookInput {
        HookInput::parse(json.as_bytes()).unwrap()
    }

    #[test]
    fn permission_prompts_and_questions() {
        let bash = input(r#"{"session_id":"s","tool_name":"Bash","tool_input":{"command":"x"}}"#);
        assert_eq!(
            signal(HookEvent::PermissionRequest, &bash),
            Ok(Some(Signal::Ask {
                reason: WaitReason::Permission,
                tool: ToolName::new("Bash"),
                agent: Agent::Main
            }))
        );
        let question = input(r#"{"session_id":"s","tool_name":"AskUserQuestion","agent_id":"a"}"#);
        assert_eq!(
            signal(HookEvent::PermissionRequest, &question),
            Ok(Some(Signal::Ask {
                reason: WaitReason::Question,
                tool: ToolName::new("AskUserQuestion"),
                agent: Agent::Sub(AgentId::from_host("a").unwrap())
            }))
        );
        assert_eq!(signal(HookEvent::PreToolUse, &bash), Ok(None));
        assert!(matches!(
            signal(HookEvent::PreToolUse, &question),
            Ok(Some(Signal::Ask {
                reason: WaitReason::Question,
                ..
            }))
        ));
        // A tool name that is not a plain name is not kept; the wait still counts.
        let odd = input(r#"{"session_id":"s","tool_name":"rm -rf /"}"#);
        assert_eq!(
            signal(HookEvent::PermissionRequest, &odd),
            Ok(Some(Signal::Ask {
                reason: WaitReason::Permission,
                tool: None,
                agent: Agent::Main
            }))
        );
    }

    #[test]
    fn claude_code_notifications_by_type() {
        let of = |kind: &str| {
            signal(
                HookEvent::Notification,
                &input(&format!(
                    r#"{{"session_id":"s","message":"m","notification_type":"{kind}"}}"#
                )),
            )
        };
        // Claude Code's notification names no agent: the wait is unattributed.
        assert!(matches!(
            of("permission_prompt"),
            Ok(Some(Signal::Ask {
                reason: WaitReason::Permission,
                agent: Agent::Unnamed,
                ..
            }))
        ));
        assert!(matches!(
            of("worker_permission_prompt"),
            Ok(Some(Signal::Ask {
                agent: Agent::Unnamed,
                ..
            }))
        ));
        assert!(matches!(
            of("elicitation_dialog"),
            Ok(Some(Signal::Ask {
                reason: WaitReason::Question,
                ..
            }))
        ));
        assert_eq!(
            of("elicitation_response"),
            Ok(Some(Signal::Answered { agent: Agent::Main }))
        );
        assert_eq!(of("idle_prompt"), Ok(Some(Signal::HostIdle)));
        assert_eq!(of("auth_success"), Ok(None));
        assert_eq!(of("brand_new"), Err(Unexpected::UnknownNotificationType));
        assert_eq!(
            signal(HookEvent::Notification, &input(r#"{"session_id":"s"}"#)),
            Err(Unexpected::NoNotificationType)
        );
    }

    #[test]
    fn turns_and_their_ends() {
        let main = input(r#"{"session_id":"s"}"#);
        let sub = input(r#"{"session_id":"s","agent_id":"agent-0"}"#);
        let agent0 = Agent::Sub(AgentId::from_host("agent-0").unwrap());
        // A subagent's end names it; Kimi Code's `main` is the session's own agent.
        assert_eq!(
            signal(HookEvent::SubagentStop, &sub),
            Ok(Some(Signal::SubagentStop {
                agent: AgentId::from_host("agent-0")
            }))
        );
        let kimi_main = input(r#"{"session_id":"s","agent_id":"main"}"#);
        assert_eq!(
            signal(HookEvent::PostToolUse, &kimi_main),
            Ok(Some(Signal::Answered { agent: Agent::Main }))
        );
        assert_eq!(
            signal(HookEvent::UserPromptSubmit, &sub),
            Ok(Some(Signal::Prompt {
                agent: agent0.clone()
            }))
        );
        assert_eq!(
            signal(HookEvent::PostToolUse, &sub),
            Ok(Some(Signal::Answered {
                agent: agent0.clone()
            }))
        );
        assert_eq!(
            signal(HookEvent::PermissionResult, &main),
            Ok(Some(Signal::Answered { agent: Agent::Main }))
        );
        assert_eq!(
            signal(HookEvent::Interrupt, &main),
            Ok(Some(Signal::Interrupt))
        );
        assert_eq!(
            signal(HookEvent::StopFailure, &main),
            Ok(Some(Signal::StopFailure))
        );
        assert_eq!(
            signal(
                HookEvent::SessionStart,
                &input(r#"{"session_id":"s","source":"compact"}"#)
            ),
            Ok(Some(Signal::Compact))
        );
        assert_eq!(signal(HookEvent::SessionEnd, &main), Ok(None));
    }
}
