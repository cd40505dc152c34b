//! The hook command text: how we write it, and how we recognise ours.
//!
//! Owns building `<program> hook <event> [--host <host>]`, with the program path quoted for
//! the shell the hosts run hook commands with, and recognising a command as ours: a program
//! whose file name is `fabric-session` (any folder, quoted or not) followed by ` hook `.
//! It never touches the file system, and never calls anything else ours.

use std::path::{Path, PathBuf};

use crate::host::Host;

/// The file name of our program (without `.exe`).
pub const PROGRAM_NAME: &str = "fabric-session";

/// The command a host runs for one of our hooks. Claude Code's `hook` defaults to
/// `--host claude`, so its commands carry no `--host`, like the plugin's.
pub fn hook_command(program: &Path, host: Host, event_arg: &str) -> String {
    let program = quote_program(program);
    match host {
        Host::Claude => format!("{program} hook {event_arg}"),
        _ => format!("{program} hook {event_arg} --host {}", host.cli_name()),
    }
}

/// Quotes a path for the hosts' shell: as is when it has no special character, else in
/// single quotes (double quotes on Windows).
pub fn quote_program(program: &Path) -> String {
    let text = program.to_string_lossy();
    let plain = !text.is_empty()
        && text.chars().all(|c| {
            c.is_ascii_alphanumeric() || "_-./+,:@%=".contains(c) || (cfg!(windows) && c == '\\')
        });
    if plain {
        text.into_owned()
    } else if cfg!(windows) {
        format!("\"{text}\"")
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// When `command` is one of ours, the program it runs (unquoted, as written: it may hold
/// `~` or a `$VARIABLE`).
pub fn our_program(command: &str) -> Option<String> {
    let (word, rest) = first_word(command)?;
    let rest = rest.trim_start();
    let after = rest.strip_prefix("hook")?;
    if !after.starts_with(char::is_whitespace) {
        return None;
    }
    let file_name = word.rsplit(['/', '\\']).next().unwrap_or(&word);
    let ours =
        file_name == PROGRAM_NAME || file_name.eq_ignore_ascii_case(&format!("{PROGRAM_NAME}.exe"));
    ours.then_some(word)
}

/// Whether `command` is one of ours.
pub fn is_ours(command: &str) -> bool {
    our_program(command).is_some()
}

/// The program of one of our commands as a path we can look at, when it is one: `~/` is
/// expanded with `home`; a relative path or one holding a shell variable gives `None`.
pub fn checkable_path(program: &str, home: &Path) -> Option<PathBuf> {
    if program.contains('$') || program.contains('%') {
        return None;
    }
    let path = match program.strip_prefix("~/") {
        Some(rest) => home.join(rest),
        None => PathBuf::from(program),
    };
    path.is_absolute().then_some(path)
}

/// Splits off the first shell word, undoing quotes and escapes the way a POSIX shell would
/// (leniently: a backslash before an ordinary character stays, so Windows paths survive).
/// `None` for an empty command or an unterminated quote.
fn first_word(command: &str) -> Option<(String, &str)> {
    let text = command.trim_start();
    let mut word = String::new();
    let mut chars = text.char_indices().peekable();
    let mut end = text.len();
    let escapable = |c: char| c.is_whitespace() || "'\"\\$`".contains(c);
    while let Some((at, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                end = at;
                break;
            }
            '\'' => loop {
                match chars.next()? {
                    (_, '\'') => break,
                    (_, c) => word.push(c),
                }
            },
            '"' => loop {
                match chars.next()? {
                    (_, '"') => break,
                    (_, '\\') => match chars.peek() {
                        Some(&(_, next)) if "\"\\$`".contains(next) => {
                            word.push(next);
                            chars.next();
                        }
                        _ => word.push('\\'),
                    },
                    (_, c) => word.push(c),
                }
            },
            '\\' => match chars.peek() {
                Some(&(_, next)) if escapable(next) => {
                    word.push(next);
                    chars.next();
                }
                _ => word.push('\\'),
            },
            c => word.push(c),
        }
    }
    if word.is_empty() {
        return None;
    }
    Some((word, &text[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_ours_whatever_the_folder_or_quoting() {
        let cases = [
            (
                "/opt/x/fabric-session hook session-start --host codex",
                Some("/opt/x/fabric-session"),
            ),
            (
                "'/Users/a b/fabric-session' hook stop",
                Some("/Users/a b/fabric-session"),
            ),
            (
                "\"/Users/a b/fabric-session\" hook stop",
                Some("/Users/a b/fabric-session"),
            ),
            (
                "/Users/a\\ b/fabric-session hook stop",
                Some("/Users/a b/fabric-session"),
            ),
            (
                "'/it'\\''s/fabric-session' hook stop",
                Some("/it's/fabric-session"),
            ),
            ("fabric-session hook session-end", Some("fabric-session")),
            (
                "${CLAUDE_PLUGIN_ROOT}/bin/fabric-session hook stop",
                Some("${CLAUDE_PLUGIN_ROOT}/bin/fabric-session"),
            ),
            (
                "\"C:\\Program Files\\Fabric\\fabric-session.exe\" hook stop",
                Some("C:\\Program Files\\Fabric\\fabric-session.exe"),
            ),
            (
                "  /a/fabric-session   hook\tstop",
                Some("/a/fabric-session"),
            ),
        ];
        for (command, program) in cases {
            assert_eq!(our_program(command).as_deref(), program, "{command}");
        }
    }

    #[test]
    fn never_takes_anything_else_for_ours() {
        let cases = [
            "",
            "echo hook",
            "/a/fabric-session status",
            "/a/fabric-session hooks",
            "/a/fabric-session-old hook stop",
            "/a/my-fabric-session hook stop",
            "/a/fabric-session/other hook stop",
            "python3 /a/fabric_session.py hook session-start",
            "'/a/fabric-session hook stop",
            "echo /a/fabric-session hook stop",
            "/a/fabric-session hook",
        ];
        for command in cases {
            assert!(!is_ours(command), "{command}");
        }
    }

    #[test]
    fn commands_round_trip_through_recognition() {
        let programs = [
            "/home/me/.local/share/fabric-companion/bin/fabric-session",
            "/Users/me/Library/Application Support/ai.passioncode.fabric-companion/bin/fabric-session",
            "/odd/it's here/fabric-session",
        ];
        for program in programs {
            for host in Host::ALL {
                let command = hook_command(Path::new(program), host, "session-start");
                assert_eq!(our_program(&command).as_deref(), Some(program), "{command}");
            }
        }
    }

    #[test]
    fn command_text_per_host() {
        let program = Path::new("/p/fabric-session");
        assert_eq!(
            hook_command(program, Host::Claude, "stop"),
            "/p/fabric-session hook stop"
        );
        assert_eq!(
            hook_command(program, Host::Codex, "session-start"),
            "/p/fabric-session hook session-start --host codex"
        );
        assert_eq!(
            hook_command(
                Path::new("/a b/fabric-session"),
                Host::Kimi,
                "user-prompt-submit"
            ),
            "'/a b/fabric-session' hook user-prompt-submit --host kimi"
        );
    }

    #[test]
    fn checkable_paths() {
        let home = Path::new("/home/me");
        assert_eq!(
            checkable_path("/a/fabric-session", home),
            Some(PathBuf::from("/a/fabric-session"))
        );
        assert_eq!(
            checkable_path("~/bin/fabric-session", home),
            Some(PathBuf::from("/home/me/bin/fabric-session"))
        );
        assert_eq!(
            checkable_path("${CLAUDE_PLUGIN_ROOT}/bin/fabric-session", home),
            None
        );
        assert_eq!(checkable_path("fabric-session", home), None);
    }
}
