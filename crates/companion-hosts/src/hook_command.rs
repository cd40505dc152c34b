//! The hook command text: how we write it, and how we recognise ours.
//!
//! Owns building `<program> hook <event> [--host <host>]` with the program path written for
//! the shell the host runs hook commands with on each OS, and recognising a command as ours:
//! a program whose file name is `fabric-session` (any folder, quoted or not) followed by
//! ` hook `. It never touches the file system (except, on Windows, to ask for a folder's
//! short name), and never calls anything else ours.
//!
//! How each host runs a hook command, from its source and documentation:
//!
//! | host | Linux, macOS | Windows |
//! |---|---|---|
//! | Claude Code | `sh -c` | Git Bash (`bash -c`), or PowerShell where Git Bash is missing |
//! | Codex | `$SHELL -lc` | `%COMSPEC% /C` with the command as one argument (Rust's quoting) |
//! | Kimi Code | `sh -c` (Node `shell: true`) | `cmd.exe /d /s /c "<command>"` (Node `shell: true`) |
//!
//! So on Windows: Claude Code's text must read the same in bash and in PowerShell, which only
//! a bare path does (forward slashes: bash would eat backslashes); Codex's must hold no
//! quote at all (Rust escapes it as `\"`, which cmd does not understand), so a bare path
//! too; Kimi's may be double-quoted. Where a path would need quoting and the shell cannot
//! take it, the folder's 8.3 short name (no spaces) stands in; failing that the install is
//! refused ([`runnable_program`]).
//!
//! A package's program (Linux: `/usr/bin/fabric-session`, which `apt remove` takes away;
//! Windows: `fabric-session.exe` in the installer's folder, which its uninstaller takes away;
//! see [`crate::stable_binary::is_packaged_program`]) gets a guard, since the person's host
//! configs keep our entries: the command does nothing, without a word and with exit 0, while
//! the program is gone (measured on Linux: Claude Code and Codex show a "hook failed" row per
//! event for a missing program, Kimi Code nothing; with the guard none of them shows
//! anything), and works again once it is back. The guard is written in the language of the
//! shell that runs it:
//!
//! | shell | guarded command |
//! |---|---|
//! | POSIX `sh -c` (Linux); Git Bash (Claude Code on Windows runs a hook with no `shell` key through `bash -c`) | `[ ! -x <program> ] \|\| <program> hook …` |
//! | `cmd /C`, `cmd /d /s /c` (Codex, Kimi Code on Windows) | `if exist <program> <program> hook …` (cmd's `if` with nothing to run leaves exit 0) |

use std::path::{Path, PathBuf};

use companion_platform::paths::PROGRAM_NAME;

use crate::host::Host;
use companion_platform::platform::Os;

/// The shell a host's hook command text goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookShell {
    /// `sh -c` and its kin (Linux, macOS): single quotes when needed.
    Posix,
    /// Claude Code on Windows: Git Bash or PowerShell, whichever is there. A bare path with
    /// forward slashes only.
    WindowsBashOrPowerShell,
    /// Codex on Windows: `cmd /C` given the command as one Rust-quoted argument. A bare path
    /// with backslashes only.
    WindowsCmdArgument,
    /// Kimi Code on Windows: `cmd /d /s /c "<command>"`, the text verbatim. Double quotes
    /// when needed.
    WindowsCmdVerbatim,
}

impl HookShell {
    /// The shell `host` runs hook commands with on `os`.
    pub fn of(os: Os, host: Host) -> HookShell {
        match (os, host) {
            (Os::Linux | Os::MacOs, _) => HookShell::Posix,
            (Os::Windows, Host::Claude) => HookShell::WindowsBashOrPowerShell,
            (Os::Windows, Host::Codex) => HookShell::WindowsCmdArgument,
            (Os::Windows, Host::Kimi) => HookShell::WindowsCmdVerbatim,
        }
    }

    /// `program` written for this shell; `None` when this shell cannot be given it safely.
    pub fn program_text(self, program: &str) -> Option<String> {
        if program.is_empty() {
            return None;
        }
        match self {
            HookShell::Posix => Some(posix_quote(program)),
            HookShell::WindowsBashOrPowerShell => {
                let forward = program.replace('\\', "/");
                windows_bare(&forward).then_some(forward)
            }
            HookShell::WindowsCmdArgument => windows_bare(program).then(|| program.to_string()),
            HookShell::WindowsCmdVerbatim => {
                if windows_bare(program) {
                    Some(program.to_string())
                } else if program.contains(['"', '%', '\n', '\r']) {
                    // cmd expands %VAR% even inside quotes; a quote cannot be escaped.
                    None
                } else {
                    Some(format!("\"{program}\""))
                }
            }
        }
    }
}

/// Characters a Windows path may hold and still be one word to bash, PowerShell and cmd
/// alike, unquoted: letters and digits (any script), `_ - . ~ :` and the separators.
/// (`~` for 8.3 short names; cmd splits at `, ; =`, PowerShell and bash treat `& ( ) ' $ %`
/// and spaces specially.)
fn windows_bare(path: &str) -> bool {
    path.chars()
        .all(|c| c.is_alphanumeric() || "_-.~:\\/".contains(c))
}

/// Quotes for a POSIX shell: as is when it has no special character, else in single quotes.
fn posix_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./+,:@%=".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The folder whose `fabric-session` a package manager may take away (the Linux package's).
pub const PACKAGED_DIR: &str = "/usr/bin";

/// The command `host` runs for one of our hooks on `os`, or `None` when its shell cannot run
/// `program` (see [`runnable_program`]). Claude Code's `hook` defaults to `--host claude`, so
/// its commands carry no `--host`, like the plugin's. The Linux package's program is guarded
/// (see the module's header); on Windows, [`guarded_hook_command_for`] is asked for.
pub fn hook_command_for(os: Os, program: &str, host: Host, event_arg: &str) -> Option<String> {
    let packaged = os == Os::Linux && Path::new(program).parent() == Some(Path::new(PACKAGED_DIR));
    command_text(os, program, host, event_arg, packaged)
}

/// [`hook_command_for`] with the guard of a package's program, in the language of the shell
/// `host` runs it with on `os` (the module's header).
pub fn guarded_hook_command_for(
    os: Os,
    program: &str,
    host: Host,
    event_arg: &str,
) -> Option<String> {
    command_text(os, program, host, event_arg, true)
}

fn command_text(
    os: Os,
    program: &str,
    host: Host,
    event_arg: &str,
    guarded: bool,
) -> Option<String> {
    let shell = HookShell::of(os, host);
    let text = shell.program_text(program)?;
    let command = match host {
        Host::Claude => format!("{text} hook {event_arg}"),
        _ => format!("{text} hook {event_arg} --host {}", host.cli_name()),
    };
    if !guarded {
        return Some(command);
    }
    Some(match shell {
        HookShell::Posix | HookShell::WindowsBashOrPowerShell => {
            format!("[ ! -x {text} ] || {command}")
        }
        HookShell::WindowsCmdArgument | HookShell::WindowsCmdVerbatim => {
            format!("if exist {text} {command}")
        }
    })
}

/// `command` without a leading guard (`[ ! -x <word> ] || `, or cmd's `if exist <word> `),
/// when it has one whose word is the program that follows (`None` when there is no guard, or
/// a different word in it).
fn unguarded(command: &str) -> Option<&str> {
    posix_unguarded(command).or_else(|| cmd_unguarded(command))
}

/// `if exist <word> <word> …` (cmd keywords in any case) without its `if exist <word> `.
fn cmd_unguarded(command: &str) -> Option<&str> {
    let keyword = |text: &str, word: &str| -> Option<usize> {
        let head = text.get(..word.len())?;
        let next = text[word.len()..].chars().next()?;
        (head.eq_ignore_ascii_case(word) && next.is_whitespace()).then_some(word.len())
    };
    let rest = command.trim_start();
    let rest = rest[keyword(rest, "if")?..].trim_start();
    let rest = rest[keyword(rest, "exist")?..].trim_start();
    let (tested, rest) = first_word(rest)?;
    let rest = rest.trim_start();
    let (program, _) = first_word(rest)?;
    (program == tested).then_some(rest)
}

fn posix_unguarded(command: &str) -> Option<&str> {
    let rest = command.trim_start().strip_prefix('[')?;
    let rest = rest.strip_prefix(char::is_whitespace)?.trim_start();
    let rest = rest.strip_prefix('!')?.trim_start();
    let rest = rest.strip_prefix("-x")?;
    let (tested, rest) = first_word(rest)?;
    let rest = rest.trim_start().strip_prefix(']')?.trim_start();
    let rest = rest.strip_prefix("||")?.trim_start();
    let (program, _) = first_word(rest)?;
    (program == tested).then_some(rest)
}

/// The command `host` runs for one of our hooks on this OS. `program` must have passed
/// [`runnable_program`]; a path it would refuse is double-quoted as a last resort.
pub fn hook_command(program: &Path, host: Host, event_arg: &str) -> String {
    let text = program.to_string_lossy();
    let command = if crate::stable_binary::is_packaged_program(program) {
        guarded_hook_command_for(Os::CURRENT, &text, host, event_arg)
    } else {
        hook_command_for(Os::CURRENT, &text, host, event_arg)
    };
    command.unwrap_or_else(|| {
        let quoted = format!("\"{text}\"");
        match host {
            Host::Claude => format!("{quoted} hook {event_arg}"),
            _ => format!("{quoted} hook {event_arg} --host {}", host.cli_name()),
        }
    })
}

/// The path `host`'s shell can run on this OS for `program`: the path itself, or on Windows
/// the same file through its folder's 8.3 short name when the long one would need quoting
/// the shell cannot take. `Err` says why neither works.
pub fn runnable_program(host: Host, program: &Path) -> Result<PathBuf, String> {
    runnable_with(Os::CURRENT, host, program, short_folder)
}

/// [`runnable_program`] with the OS and the short-name lookup given (testable anywhere).
pub fn runnable_with(
    os: Os,
    host: Host,
    program: &Path,
    short_folder: impl Fn(&Path) -> Option<PathBuf>,
) -> Result<PathBuf, String> {
    let shell = HookShell::of(os, host);
    if shell.program_text(&program.to_string_lossy()).is_some() {
        return Ok(program.to_path_buf());
    }
    // Split by hand: a Windows path is checked on any OS in tests.
    let text = program.to_string_lossy();
    let short = text.rfind(['\\', '/']).and_then(|cut| {
        let separator = if os == Os::Windows { '\\' } else { '/' };
        let short = short_folder(Path::new(&text[..cut]))?;
        Some(PathBuf::from(format!(
            "{}{separator}{}",
            short.display(),
            &text[cut + 1..]
        )))
    });
    if let Some(short) = short
        && shell.program_text(&short.to_string_lossy()).is_some()
    {
        return Ok(short);
    }
    Err(format!(
        "{} runs hook commands through {}, which cannot run {} (its path holds a space or one of & ( ) , ; = % ' and the folder has no short name without one); install {PROGRAM_NAME} in a folder whose path has none of those, and pass it with --script",
        host.display_name(),
        match shell {
            HookShell::WindowsBashOrPowerShell => "Git Bash or PowerShell",
            HookShell::WindowsCmdArgument | HookShell::WindowsCmdVerbatim => "cmd.exe",
            HookShell::Posix => "sh",
        },
        program.display()
    ))
}

/// A folder's 8.3 short name (`GetShortPathNameW`), when the volume keeps them.
#[cfg(windows)]
fn short_folder(folder: &Path) -> Option<PathBuf> {
    use std::os::windows::ffi::{OsStrExt, OsStringExt};
    use windows_sys::Win32::Storage::FileSystem::GetShortPathNameW;
    let wide: Vec<u16> = folder.as_os_str().encode_wide().chain([0]).collect();
    let mut buffer = vec![0u16; 1024];
    // SAFETY: `wide` is NUL-terminated; the buffer holds the length passed.
    let len = unsafe { GetShortPathNameW(wide.as_ptr(), buffer.as_mut_ptr(), buffer.len() as u32) };
    let len = usize::try_from(len)
        .ok()
        .filter(|&l| l > 0 && l < buffer.len())?;
    Some(PathBuf::from(std::ffi::OsString::from_wide(&buffer[..len])))
}

/// Short names exist only on Windows.
#[cfg(not(windows))]
fn short_folder(_folder: &Path) -> Option<PathBuf> {
    None
}

/// Quotes a path for the person's terminal, in command position (the program to run):
/// a POSIX shell's quoting on Linux and macOS; on Windows PowerShell's (the default
/// terminal), `& '<path>'` when the bare path would not do.
pub fn quote_program(program: &Path) -> String {
    let text = program.to_string_lossy();
    match Os::CURRENT {
        Os::Windows if !windows_bare(&text) => format!("& {}", powershell_quote(&text)),
        Os::Windows => text.into_owned(),
        Os::Linux | Os::MacOs => posix_quote(&text),
    }
}

/// Quotes a path for the person's terminal as an argument: POSIX quoting on Linux and
/// macOS, PowerShell's single quotes on Windows when the bare path would not do.
pub fn quote_argument(path: &Path) -> String {
    let text = path.to_string_lossy();
    match Os::CURRENT {
        Os::Windows if !windows_bare(&text) => powershell_quote(&text),
        Os::Windows => text.into_owned(),
        Os::Linux | Os::MacOs => posix_quote(&text),
    }
}

/// PowerShell's verbatim string: single quotes, a quote doubled.
fn powershell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// When `command` is one of ours, the program it runs (unquoted, as written: it may hold
/// `~` or a `$VARIABLE`).
pub fn our_program(command: &str) -> Option<String> {
    let command = unguarded(command).unwrap_or(command);
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
    fn the_packages_program_is_guarded_and_still_ours() {
        let program = "/usr/bin/fabric-session";
        let command = hook_command_for(Os::Linux, program, Host::Codex, "session-start").unwrap();
        assert_eq!(
            command,
            "[ ! -x /usr/bin/fabric-session ] || /usr/bin/fabric-session hook session-start --host codex"
        );
        assert_eq!(
            hook_command_for(Os::Linux, program, Host::Claude, "stop").unwrap(),
            "[ ! -x /usr/bin/fabric-session ] || /usr/bin/fabric-session hook stop"
        );
        assert_eq!(our_program(&command).as_deref(), Some(program));
        // Anywhere else, or on macOS: no guard.
        assert_eq!(
            hook_command_for(
                Os::Linux,
                "/usr/local/bin/fabric-session",
                Host::Claude,
                "stop"
            )
            .unwrap(),
            "/usr/local/bin/fabric-session hook stop"
        );
        assert_eq!(
            hook_command_for(Os::MacOs, program, Host::Claude, "stop").unwrap(),
            "/usr/bin/fabric-session hook stop"
        );
        // A guard on some other program, or a guard with no hook after it, is not ours.
        for command in [
            "[ ! -x /usr/bin/other ] || /usr/bin/fabric-session hook stop",
            "[ ! -x /usr/bin/fabric-session ] || echo hook stop",
            "[ ! -x /usr/bin/fabric-session ] || /usr/bin/fabric-session status",
            "[ -x /usr/bin/fabric-session ] || /usr/bin/fabric-session hook stop",
        ] {
            assert!(!is_ours(command), "{command}");
        }
    }

    #[test]
    #[cfg(unix)]
    fn the_guard_runs_the_hook_when_the_program_is_there_and_is_silent_when_it_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("fabric-session");
        // The same guard text hook_command_for writes, on a program we control.
        let command = format!("[ ! -x {p} ] || {p} hook stop", p = program.display());
        let run = || {
            std::process::Command::new("/bin/sh")
                .args(["-c", &command])
                .output()
                .unwrap()
        };
        let gone = run();
        assert_eq!(gone.status.code(), Some(0));
        assert!(gone.stdout.is_empty() && gone.stderr.is_empty(), "{gone:?}");
        std::fs::write(&program, "#!/bin/sh\necho ran \"$@\"\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let there = run();
        assert_eq!(String::from_utf8_lossy(&there.stdout), "ran hook stop\n");
    }

    #[test]
    fn the_windows_packages_program_is_guarded_in_each_hosts_shell_and_still_ours() {
        let bare = r"C:\Users\ada\AppData\Local\Programs\fabric-companion\fabric-session.exe";
        let spaced =
            r"C:\Users\Ada Lovelace\AppData\Local\Programs\fabric-companion\fabric-session.exe";
        let codex =
            guarded_hook_command_for(Os::Windows, bare, Host::Codex, "session-start").unwrap();
        assert_eq!(
            codex,
            format!("if exist {bare} {bare} hook session-start --host codex")
        );
        let kimi = guarded_hook_command_for(Os::Windows, spaced, Host::Kimi, "stop").unwrap();
        assert_eq!(
            kimi,
            format!("if exist \"{spaced}\" \"{spaced}\" hook stop --host kimi")
        );
        // Claude Code runs a hook with no `shell` key through Git Bash: bash's guard, forward
        // slashes.
        let claude = guarded_hook_command_for(Os::Windows, bare, Host::Claude, "stop").unwrap();
        let forward = bare.replace('\\', "/");
        assert_eq!(claude, format!("[ ! -x {forward} ] || {forward} hook stop"));
        // Codex's cmd argument cannot be quoted: a spaced path has no guarded command either.
        assert_eq!(
            guarded_hook_command_for(Os::Windows, spaced, Host::Codex, "stop"),
            None
        );
        assert_eq!(our_program(&codex).as_deref(), Some(bare));
        assert_eq!(our_program(&kimi).as_deref(), Some(spaced));
        assert_eq!(our_program(&claude).as_deref(), Some(forward.as_str()));
        assert_eq!(
            our_program(&format!("IF EXIST {bare} {bare} hook stop --host codex")).as_deref(),
            Some(bare)
        );
        // A guard on some other program, or no hook after it, is not ours.
        for command in [
            format!(r"if exist C:\other.exe {bare} hook stop"),
            format!("if exist {bare} echo hook stop"),
            format!("if exist {bare} {bare} status"),
            format!("if not exist {bare} {bare} hook stop"),
            format!("ifexist {bare} {bare} hook stop"),
        ] {
            assert!(!is_ours(&command), "{command}");
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
                for os in [Os::Linux, Os::MacOs] {
                    let command = hook_command_for(os, program, host, "session-start").unwrap();
                    assert_eq!(our_program(&command).as_deref(), Some(program), "{command}");
                }
            }
        }
    }

    #[test]
    fn command_text_per_host() {
        let program = "/p/fabric-session";
        assert_eq!(
            hook_command_for(Os::Linux, program, Host::Claude, "stop").unwrap(),
            "/p/fabric-session hook stop"
        );
        assert_eq!(
            hook_command_for(Os::Linux, program, Host::Codex, "session-start").unwrap(),
            "/p/fabric-session hook session-start --host codex"
        );
        assert_eq!(
            hook_command_for(
                Os::MacOs,
                "/a b/fabric-session",
                Host::Kimi,
                "user-prompt-submit"
            )
            .unwrap(),
            "'/a b/fabric-session' hook user-prompt-submit --host kimi"
        );
    }

    #[test]
    fn this_os_commands_are_the_tables() {
        let program = if cfg!(windows) {
            r"C:\p\fabric-session.exe"
        } else {
            "/p/fabric-session"
        };
        for host in Host::ALL {
            assert_eq!(
                Some(hook_command(Path::new(program), host, "stop")),
                hook_command_for(Os::CURRENT, program, host, "stop")
            );
        }
    }

    #[cfg(unix)]
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

    #[test]
    fn windows_commands_suit_each_hosts_shell() {
        let plain = r"C:\Users\me\AppData\Local\fabric-companion\bin\fabric-session.exe";
        assert_eq!(
            hook_command_for(Os::Windows, plain, Host::Claude, "stop").unwrap(),
            "C:/Users/me/AppData/Local/fabric-companion/bin/fabric-session.exe hook stop"
        );
        assert_eq!(
            hook_command_for(Os::Windows, plain, Host::Codex, "session-start").unwrap(),
            format!("{plain} hook session-start --host codex")
        );
        assert_eq!(
            hook_command_for(Os::Windows, plain, Host::Kimi, "user-prompt-submit").unwrap(),
            format!("{plain} hook user-prompt-submit --host kimi")
        );
        // A space: only Kimi's cmd /d /s /c takes a quoted path.
        let spaced = r"C:\Users\Jo Ann\AppData\Local\fabric-companion\bin\fabric-session.exe";
        assert_eq!(
            hook_command_for(Os::Windows, spaced, Host::Claude, "stop"),
            None
        );
        assert_eq!(
            hook_command_for(Os::Windows, spaced, Host::Codex, "stop"),
            None
        );
        assert_eq!(
            hook_command_for(Os::Windows, spaced, Host::Kimi, "stop").unwrap(),
            format!("\"{spaced}\" hook stop --host kimi")
        );
        // cmd expands %VAR% even inside quotes, and splits at , ; =
        for odd in [r"C:\a%b\fabric-session.exe", r"C:\a,b\fabric-session.exe"] {
            assert_eq!(
                hook_command_for(Os::Windows, odd, Host::Codex, "stop"),
                None
            );
        }
        assert_eq!(
            hook_command_for(
                Os::Windows,
                r"C:\a%b\fabric-session.exe",
                Host::Kimi,
                "stop"
            ),
            None
        );
        // Letters of any script are plain; 8.3 names keep their tilde.
        let accented = r"C:\Users\José\AppData\Local\FABRIC~1\bin\fabric-session.exe";
        assert_eq!(
            hook_command_for(Os::Windows, accented, Host::Codex, "stop").unwrap(),
            format!("{accented} hook stop --host codex")
        );
    }

    #[test]
    fn every_windows_command_is_recognised_as_ours() {
        let programs = [
            r"C:\Users\me\AppData\Local\fabric-companion\bin\fabric-session.exe",
            r"C:\Users\JOANN~1\AppData\Local\fabric-companion\bin\fabric-session.exe",
        ];
        for program in programs {
            for host in Host::ALL {
                let command = hook_command_for(Os::Windows, program, host, "stop").unwrap();
                let found = our_program(&command).unwrap();
                assert_eq!(found.replace('/', "\\"), program, "{command}");
            }
        }
        let spaced = r"C:\Users\Jo Ann\fabric-session.exe";
        let kimi = hook_command_for(Os::Windows, spaced, Host::Kimi, "stop").unwrap();
        assert_eq!(our_program(&kimi).as_deref(), Some(spaced));
    }

    #[test]
    fn a_short_folder_stands_in_where_the_shell_cannot_quote() {
        let program =
            Path::new(r"C:\Users\Jo Ann\AppData\Local\fabric-companion\bin\fabric-session.exe");
        let short = |_: &Path| {
            Some(PathBuf::from(
                r"C:\Users\JOANN~1\AppData\Local\FABRIC~1\bin",
            ))
        };
        for host in [Host::Claude, Host::Codex] {
            let chosen = runnable_with(Os::Windows, host, program, short).unwrap();
            assert_eq!(
                chosen,
                Path::new(r"C:\Users\JOANN~1\AppData\Local\FABRIC~1\bin\fabric-session.exe"),
                "{host:?}"
            );
        }
        // Kimi quotes it instead: the long path stays.
        assert_eq!(
            runnable_with(Os::Windows, Host::Kimi, program, short).unwrap(),
            program
        );
        // No short names on that volume: refused, saying why.
        let err = runnable_with(Os::Windows, Host::Codex, program, |_: &Path| None).unwrap_err();
        assert!(err.contains("Codex") && err.contains("cmd.exe"), "{err}");
        let err = runnable_with(Os::Windows, Host::Claude, program, |_: &Path| None).unwrap_err();
        assert!(err.contains("Git Bash or PowerShell"), "{err}");
        // POSIX shells quote anything.
        let mac = Path::new(
            "/Users/a/Library/Application Support/ai.passioncode.fabric-companion/bin/fabric-session",
        );
        assert_eq!(
            runnable_with(Os::MacOs, Host::Codex, mac, |_: &Path| None).unwrap(),
            mac
        );
        assert_eq!(
            hook_command_for(
                Os::MacOs,
                &mac.to_string_lossy(),
                Host::Codex,
                "session-start"
            )
            .unwrap(),
            format!("'{}' hook session-start --host codex", mac.display())
        );
    }
}
