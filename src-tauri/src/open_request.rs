//! What the dashboard is asked to show when it starts or when a second start hands over to it:
//! `fabric-companion --view hooks [--host <claude|codex|kimi>]` opens the Hooks view and, with a
//! host, that host's install plan (the exact change; nothing is written until the person
//! confirms). The tray's "Set up hooks for <host>…" starts it so. Parsing only: it never
//! writes anything.

use companion_hosts::host::Host;
use serde::Serialize;

/// A view the dashboard can be asked to open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum OpenView {
    Hooks,
}

/// The view to open, and for the Hooks view the host whose install plan to show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct OpenRequest {
    pub view: OpenView,
    pub host: Option<Host>,
}

/// Reads `--view <view>` and `--host <host>` from the arguments after the program's name.
/// No arguments: `Ok(None)`. Anything else is refused with one line saying what was wrong.
pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Option<OpenRequest>, String> {
    let mut view = None;
    let mut host = None;
    let mut args = args.iter().map(AsRef::as_ref);
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name, Some(value)),
            _ => (arg, None),
        };
        let mut value = || {
            inline
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name {
            "--view" => match value()? {
                "hooks" => view = Some(OpenView::Hooks),
                other => return Err(format!("--view {other}: the only view to open is hooks")),
            },
            "--host" => {
                let text = value()?;
                host =
                    Some(Host::from_cli_name(text).ok_or_else(|| {
                        format!("--host {text}: not a host (claude, codex or kimi)")
                    })?);
            }
            other => {
                return Err(format!(
                    "unknown argument {other} (expected --view hooks [--host <host>])"
                ));
            }
        }
    }
    match (view, host) {
        (None, None) => Ok(None),
        (None, Some(_)) => Err("--host goes with --view hooks".into()),
        (Some(view), host) => Ok(Some(OpenRequest { view, host })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_view_and_the_host() {
        assert_eq!(parse::<&str>(&[]), Ok(None));
        assert_eq!(
            parse(&["--view", "hooks", "--host", "codex"]),
            Ok(Some(OpenRequest {
                view: OpenView::Hooks,
                host: Some(Host::Codex)
            }))
        );
        assert_eq!(
            parse(&["--host=kimi", "--view=hooks"]),
            Ok(Some(OpenRequest {
                view: OpenView::Hooks,
                host: Some(Host::Kimi)
            }))
        );
        assert_eq!(
            parse(&["--view", "hooks"]),
            Ok(Some(OpenRequest {
                view: OpenView::Hooks,
                host: None
            }))
        );
    }

    #[test]
    fn refuses_anything_else_in_one_line() {
        for (args, wanted) in [
            (vec!["--view"], "--view needs a value"),
            (
                vec!["--view", "log"],
                "--view log: the only view to open is hooks",
            ),
            (
                vec!["--view", "hooks", "--host", "vim"],
                "--host vim: not a host (claude, codex or kimi)",
            ),
            (vec!["--host", "codex"], "--host goes with --view hooks"),
            (
                vec!["--frobnicate"],
                "unknown argument --frobnicate (expected --view hooks [--host <host>])",
            ),
        ] {
            assert_eq!(parse(&args), Err(wanted.to_string()), "{args:?}");
        }
    }
}
