//! The one place a hook writes its answer to stdout: `hookSpecificOutput` JSON for Claude Code,
//! plain text for Codex and Kimi Code, always under the hosts' 10,000-character cap.
//! Everything else a hook has to say goes to the log, never to stdout or stderr.

use std::io::Write;

use companion_hosts::host::Host;

/// Hosts replace hook output of 10,000 characters or more; we stay well under.
pub const OUTPUT_LIMIT_CHARS: usize = 10_000;
/// Room kept for the JSON envelope and escapes.
const TEXT_BUDGET_CHARS: usize = 9_000;

/// Which hook event the answer belongs to (Claude Code echoes it back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerEvent {
    SessionStart,
    UserPromptSubmit,
}

impl AnswerEvent {
    fn hook_event_name(self) -> &'static str {
        match self {
            AnswerEvent::SessionStart => "SessionStart",
            AnswerEvent::UserPromptSubmit => "UserPromptSubmit",
        }
    }
}

/// Renders the answer exactly as it will be printed (empty text renders nothing).
pub fn render(host: Host, event: AnswerEvent, text: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    let mut text = truncate_chars(text, TEXT_BUDGET_CHARS);
    loop {
        let rendered = if host.wants_json_output() {
            let value = serde_json::json!({
                "hookSpecificOutput": {
                    "hookEventName": event.hook_event_name(),
                    "additionalContext": text,
                }
            });
            format!("{value}\n")
        } else {
            format!("{text}\n")
        };
        let chars = rendered.chars().count();
        if chars < OUTPUT_LIMIT_CHARS {
            return rendered;
        }
        // Escapes made it too long: cut what they overshot and try again.
        let keep = text
            .chars()
            .count()
            .saturating_sub(chars - OUTPUT_LIMIT_CHARS + 1);
        text = truncate_chars(&text, keep);
    }
}

/// Prints the answer; a closed stdout is ignored (the hook still exits 0).
pub fn emit(host: Host, event: AnswerEvent, text: &str) {
    let rendered = render(host, event, text);
    if rendered.is_empty() {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(rendered.as_bytes());
    let _ = stdout.flush();
}

fn truncate_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => text[..cut].to_string(),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_gets_hook_specific_output() {
        let out = render(Host::Claude, AnswerEvent::SessionStart, "hello");
        let value: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value["hookSpecificOutput"]["hookEventName"], "SessionStart");
        assert_eq!(value["hookSpecificOutput"]["additionalContext"], "hello");
        assert_eq!(
            render(Host::Codex, AnswerEvent::SessionStart, "hello"),
            "hello\n"
        );
        assert_eq!(render(Host::Kimi, AnswerEvent::UserPromptSubmit, ""), "");
    }

    #[test]
    fn output_stays_under_the_cap_even_with_escapes() {
        let text = "\u{1}\"".repeat(20_000);
        for host in Host::ALL {
            let out = render(host, AnswerEvent::UserPromptSubmit, &text);
            assert!(out.chars().count() < OUTPUT_LIMIT_CHARS, "{host}");
            assert!(!out.is_empty());
        }
    }
}
