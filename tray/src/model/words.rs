//! The words of a notification: what a rise or a wait says, for one session or several.

use super::*;

/// What the tray says after a jump to a session that raised no window (`None` when one was
/// raised): the session ended, or where it is. Why raising is not possible here is said once
/// (`said_why`: it was said before in this run).
pub fn focus_notice(
    result: &Result<Raised, FocusError>,
    said_why: bool,
) -> Option<(String, String)> {
    match result {
        Ok(_) => None,
        Err(FocusError::UnknownSession | FocusError::ProcessGone) => Some((
            "Session ended".into(),
            "Its process is gone; there is no window to go to.".into(),
        )),
        Err(FocusError::NotAllowed { refusal, place }) => {
            let body = if said_why {
                format!("It is {place}.")
            } else {
                format!("Cannot go there: {}. It is {place}.", refusal.describe())
            };
            Some(("Where the session is".into(), body))
        }
    }
}

/// A notification's summary and body. One session: its project, `N unread on the project
/// board`. Several: `3 sessions · 7 unread`, and their projects.
/// Both are clean for the desktop ([`crate::safe_text`]): a project's name comes from outside.
pub fn notification_text(sessions: &[Notified]) -> (String, String) {
    let (summary, body) = notification_words(sessions);
    (
        crate::safe_text::label(&summary),
        crate::safe_text::body(&body),
    )
}

fn notification_words(sessions: &[Notified]) -> (String, String) {
    let name = |p: &str| {
        if p.is_empty() {
            "?".to_string()
        } else {
            p.to_string()
        }
    };
    let mut projects: Vec<String> = Vec::new();
    for project in sessions.iter().map(|s| name(&s.project)) {
        if !projects.contains(&project) {
            projects.push(project);
        }
    }
    match sessions {
        [] => (String::new(), String::new()),
        [one] => match &one.what {
            Notice::Unread(unread) => (
                name(&one.project),
                format!("{unread} unread on the project board"),
            ),
            Notice::NeedsYou { reason, .. } => (
                format!("{} needs you", name(&one.project)),
                match reason {
                    WaitReason::Permission => format!(
                        "{} is waiting for your permission.",
                        one.host.display_name()
                    ),
                    WaitReason::Question => {
                        format!("{} asked you a question.", one.host.display_name())
                    }
                },
            ),
            Notice::LongTurn { minutes } => (
                format!("{} finished", name(&one.project)),
                format!(
                    "{} finished a turn of {minutes} min.",
                    one.host.display_name()
                ),
            ),
        },
        many if many
            .iter()
            .all(|s| matches!(s.what, Notice::NeedsYou { .. })) =>
        {
            (
                format!("{} sessions need you", many.len()),
                projects.join(", "),
            )
        }
        many => {
            let unread: u64 = many
                .iter()
                .map(|s| match s.what {
                    Notice::Unread(n) => n,
                    _ => 0,
                })
                .fold(0, u64::saturating_add);
            (
                format!("{} sessions · {unread} unread", many.len()),
                projects.join(", "),
            )
        }
    }
}
