//! Recognising a shell that wraps a hook command: given a process's name and arguments, the
//! command string it was asked to run, for every wrapper the hosts use — POSIX shells with
//! `-c` in any of its spellings (`sh -c`, `bash -lc`, `bash -l -c`, `bash --login -c`,
//! `zsh -xc`, `dash -ec`, `bash -o pipefail -c`), fish (`fish -c`, `--command`), Windows'
//! `cmd /C` (`cmd.exe /d /s /c "…"`, as Node's `shell: true` starts it) and PowerShell
//! (`powershell -Command`, `pwsh -c`).
//!
//! Pure logic on strings, the same on every platform: it never reads a process itself
//! (`process` does, and asks here).

/// The kind of shell a process name stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shell {
    /// `sh`, `bash`, `dash`, `zsh`, `ksh` and kin: `-c` makes the first operand the command.
    Posix,
    /// fish: `-c <command>` / `--command <command>`.
    Fish,
    /// Windows' `cmd.exe`: `/C` (or `/R`); everything after it is the command.
    Cmd,
    /// Windows PowerShell 5 (`powershell.exe`): `-Command`, or a bare first argument.
    PowerShell5,
    /// PowerShell 7 (`pwsh`): `-Command` (a bare first argument is a script file).
    Pwsh,
}

const POSIX_SHELLS: [&str; 9] = [
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh",
];

impl Shell {
    /// From a process name or a program path: the file name, without `.exe`, any case, and
    /// without the `-` a login shell's `argv[0]` starts with.
    fn of(name: &str) -> Option<Shell> {
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        let base = base.strip_prefix('-').unwrap_or(base).to_ascii_lowercase();
        let base = base.strip_suffix(".exe").unwrap_or(&base);
        match base {
            "fish" => Some(Shell::Fish),
            "cmd" => Some(Shell::Cmd),
            "powershell" => Some(Shell::PowerShell5),
            "pwsh" => Some(Shell::Pwsh),
            _ if POSIX_SHELLS.contains(&base) => Some(Shell::Posix),
            _ => None,
        }
    }
}

/// The command string a shell process runs, when it is a shell in command mode. `name` is the
/// kernel's process name (`comm`); `args` its full argument list, `args[0]` the program. The
/// name decides the shell; when it says nothing, `args[0]` does.
pub fn command_string(name: &str, args: &[String]) -> Option<String> {
    let shell = Shell::of(name).or_else(|| Shell::of(args.first()?))?;
    let rest = args.get(1..).unwrap_or_default();
    match shell {
        Shell::Posix => posix(rest),
        Shell::Fish => fish(rest),
        Shell::Cmd => cmd(rest),
        Shell::PowerShell5 => powershell(rest, true),
        Shell::Pwsh => powershell(rest, false),
    }
}

/// Whether a process name or program path names a shell this module knows (`cmd.exe`,
/// `bash`, `pwsh`, …): for where a shell's command line cannot be read (Wine reports none),
/// so its image name is all there is.
pub fn is_shell(name: &str) -> bool {
    Shell::of(name).is_some()
}

/// Whether the process is a shell running a command that names `program` (ASCII case
/// ignored: Windows paths are case-insensitive).
pub fn wraps_program(name: &str, args: &[String], program: &str) -> bool {
    command_string(name, args).is_some_and(|command| {
        command
            .to_ascii_lowercase()
            .contains(&program.to_ascii_lowercase())
    })
}

/// `sh [options] -c <command> [name [args…]]`: options come first, `c` may sit in a group of
/// short flags (`-lc`, `-xc`, `-ec`, `-cl`), `-o`/`-O` take a name, `--rcfile`/`--init-file`
/// take a file; the command is the first operand.
fn posix(args: &[String]) -> Option<String> {
    let mut command_mode = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if arg == "--" || arg == "-" {
            i += 1;
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        let flags = arg.strip_prefix('-').or_else(|| arg.strip_prefix('+'));
        match flags {
            Some(flags) if !flags.is_empty() => {
                if arg.starts_with('-') && flags.contains('c') {
                    command_mode = true;
                }
                i += 1;
                if flags.contains('o') || flags.contains('O') {
                    i += 1;
                }
            }
            _ => break,
        }
    }
    if command_mode {
        args.get(i).cloned()
    } else {
        None
    }
}

/// fish's options that take a value (`-C <cmd>`, `--debug <categories>`, …).
const FISH_VALUE_SHORT: &str = "Cdopf";
const FISH_VALUE_LONG: [&str; 6] = [
    "init-command",
    "debug",
    "debug-output",
    "profile",
    "profile-startup",
    "features",
];

/// `fish [options] -c <command>`: `-c` takes the command as its value (`-c cmd`, `-ccmd`,
/// `-lc cmd`, `--command cmd`, `--command=cmd`).
fn fish(args: &[String]) -> Option<String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg == "--" {
            return None;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            if name == "command" {
                return value.map(str::to_string).or_else(|| args.get(i).cloned());
            }
            if value.is_none() && FISH_VALUE_LONG.contains(&name) {
                i += 1;
            }
            continue;
        }
        // An operand (a script file): no command string.
        let flags = arg.strip_prefix('-').filter(|f| !f.is_empty())?;
        for (at, flag) in flags.char_indices() {
            let value = &flags[at + flag.len_utf8()..];
            if flag == 'c' {
                return if value.is_empty() {
                    args.get(i).cloned()
                } else {
                    Some(value.to_string())
                };
            }
            if FISH_VALUE_SHORT.contains(flag) {
                if value.is_empty() {
                    i += 1;
                }
                break;
            }
        }
    }
    None
}

/// `cmd.exe [/d] [/s] [/q] [/e:on] … /c <command…>`: switches any case; `/C` or `/R` ends them
/// and everything after is the command (also glued on: `/c"…"`). `/K` keeps an interactive
/// shell open: not a hook's wrapper.
fn cmd(args: &[String]) -> Option<String> {
    for (at, arg) in args.iter().enumerate() {
        // A program before `/C` (a batch file): not a wrapper.
        let switch = arg.strip_prefix('/')?;
        let mut chars = switch.chars();
        match chars.next().map(|c| c.to_ascii_lowercase()) {
            Some('c' | 'r') => {
                let glued = chars.as_str();
                let mut parts: Vec<&str> = Vec::new();
                if !glued.is_empty() {
                    parts.push(glued);
                }
                parts.extend(args[at + 1..].iter().map(String::as_str));
                return Some(parts.join(" "));
            }
            Some('k') => return None,
            _ => {}
        }
    }
    None
}

/// PowerShell parameters that take a value (full names; unambiguous prefixes are accepted).
const POWERSHELL_VALUE_PARAMETERS: [&str; 11] = [
    "executionpolicy",
    "windowstyle",
    "workingdirectory",
    "configurationname",
    "configurationfile",
    "outputformat",
    "inputformat",
    "psconsolefile",
    "version",
    "settingsfile",
    "custompipename",
];

/// `powershell|pwsh [-NoLogo] [-NoProfile] [-ExecutionPolicy Bypass] … -Command <command…>`:
/// parameters start with `-`, `--` or `/`, any case, and may be shortened (`-c`, `-com`);
/// everything after `-Command` is the command. Windows PowerShell also takes a bare first
/// argument as the command (pwsh takes it as a script file). `-Command -` (read stdin),
/// `-File` and `-EncodedCommand` wrap nothing we can read.
fn powershell(args: &[String], bare_is_command: bool) -> Option<String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let name = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-'))
            .or_else(|| arg.strip_prefix('/'));
        let Some(name) = name.map(str::to_ascii_lowercase).filter(|n| !n.is_empty()) else {
            return bare_is_command.then(|| args[i..].join(" "));
        };
        i += 1;
        if name == "c" || (name.len() >= 3 && "command".starts_with(&name)) {
            let rest = args.get(i..).unwrap_or_default();
            return (rest.first().is_some_and(|first| first != "-")).then(|| rest.join(" "));
        }
        if name == "f" || name == "e" || "file".starts_with(&name) || name.starts_with("enc") {
            return None;
        }
        let takes_value = name.len() >= 2
            && POWERSHELL_VALUE_PARAMETERS
                .iter()
                .any(|full| full.starts_with(&name))
            || matches!(name.as_str(), "ep" | "ex" | "w" | "wd" | "of" | "if" | "v");
        if takes_value {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: &str = "'/home/p/.local/share/fabric-companion/bin/fabric-session' hook stop";

    fn argv(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| a.to_string()).collect()
    }

    fn command(name: &str, list: &[&str]) -> Option<String> {
        command_string(name, &argv(list))
    }

    #[test]
    fn shells_are_known_by_their_image_name() {
        for name in [
            "cmd",
            "CMD.EXE",
            r"C:\windows\system32\cmd.exe",
            "powershell",
            "pwsh.exe",
            "bash",
            "-bash",
            "/usr/bin/fish",
        ] {
            assert!(is_shell(name), "{name}");
        }
        for name in ["codex", "node", "claude.exe", "kimi", "fabric-session", ""] {
            assert!(!is_shell(name), "{name}");
        }
    }

    #[test]
    fn posix_shells_in_every_spelling_of_dash_c() {
        for (name, list) in [
            ("sh", &["/bin/sh", "-c", OURS][..]),
            ("bash", &["/bin/bash", "-c", OURS]),
            ("bash", &["/bin/bash", "-lc", OURS]),
            ("bash", &["/bin/bash", "-cl", OURS]),
            ("bash", &["/bin/bash", "-l", "-c", OURS]),
            ("bash", &["/bin/bash", "--login", "-c", OURS]),
            ("bash", &["bash", "--noprofile", "--norc", "-c", OURS]),
            ("bash", &["bash", "--rcfile", "/tmp/rc", "-c", OURS]),
            ("bash", &["bash", "-o", "pipefail", "-c", OURS]),
            ("bash", &["bash", "-eo", "pipefail", "-c", OURS]),
            ("bash", &["bash", "-O", "extglob", "-lc", OURS]),
            ("zsh", &["/bin/zsh", "-xc", OURS]),
            ("zsh", &["zsh", "-lc", OURS, "zsh"]),
            ("dash", &["dash", "-ec", OURS]),
            ("ksh", &["ksh", "+x", "-c", OURS]),
            ("bash", &["-bash", "-c", OURS]),
            ("mksh", &["mksh", "-c", "--", OURS]),
        ] {
            assert_eq!(command(name, list).as_deref(), Some(OURS), "{list:?}");
            assert!(
                wraps_program(name, &argv(list), "fabric-session"),
                "{list:?}"
            );
        }
    }

    #[test]
    fn posix_shells_without_dash_c_wrap_nothing() {
        for list in [
            &["bash"][..],
            &["bash", "-l"],
            &["bash", "/usr/local/bin/some-script", "-c", OURS],
            &["bash", "-o", "c", OURS],
            &["bash", "+c", OURS],
            &["sh", "-s", OURS],
            &["bash", "-i"],
        ] {
            assert_eq!(command("bash", list), None, "{list:?}");
        }
        // A shell running someone else's command.
        assert!(!wraps_program(
            "bash",
            &argv(&["bash", "-lc", "claude --resume"]),
            "fabric-session"
        ));
    }

    #[test]
    fn fish_in_every_spelling_of_its_command() {
        for list in [
            &["fish", "-c", OURS][..],
            &["/usr/bin/fish", "-l", "-c", OURS],
            &["fish", "-lc", OURS],
            &["fish", "--login", "--command", OURS],
            &["fish", "--command", OURS],
            &["fish", "-C", "set x 1", "-c", OURS],
            &["fish", "--init-command", "set x 1", "-c", OURS],
            &["fish", "--no-config", "-c", OURS],
        ] {
            assert_eq!(command("fish", list).as_deref(), Some(OURS), "{list:?}");
        }
        assert_eq!(
            command("fish", &["fish", &format!("--command={OURS}")]).as_deref(),
            Some(OURS)
        );
        assert_eq!(
            command("fish", &["fish", &format!("-c{OURS}")]).as_deref(),
            Some(OURS)
        );
        for list in [
            &["fish"][..],
            &["fish", "-l"],
            &["fish", "script.fish", "-c", OURS],
            &["fish", "-C", "-c"],
        ] {
            assert_eq!(command("fish", list), None, "{list:?}");
        }
    }

    #[test]
    fn windows_cmd_with_slash_c_in_any_case_and_after_other_switches() {
        let ours = r#""C:\Users\p\AppData\Local\Fabric Companion\fabric-session.exe" hook stop --host codex"#;
        for (name, list) in [
            (
                "cmd.exe",
                &["C:\\Windows\\system32\\cmd.exe", "/C", ours][..],
            ),
            ("cmd.exe", &["cmd.exe", "/c", ours]),
            ("cmd.exe", &["cmd.exe", "/d", "/s", "/c", ours]),
            ("CMD.EXE", &["cmd", "/D", "/S", "/C", ours]),
            ("cmd", &["cmd", "/q", "/e:on", "/v:off", "/R", ours]),
        ] {
            assert_eq!(command(name, list).as_deref(), Some(ours), "{list:?}");
            assert!(wraps_program(name, &argv(list), "fabric-session"));
        }
        // Split on spaces (a command line read through `ps`), or glued to the switch.
        let split = argv(&[
            "cmd.exe",
            "/d",
            "/s",
            "/c",
            "\"C:\\x\\fabric-session.exe\"",
            "hook",
            "stop",
        ]);
        assert!(wraps_program("cmd.exe", &split, "fabric-session"));
        assert!(wraps_program(
            "cmd.exe",
            &argv(&["cmd.exe", "/c\"C:\\x\\Fabric-Session.exe hook stop\""]),
            "fabric-session"
        ));
        for list in [
            &["cmd.exe"][..],
            &["cmd.exe", "/k", ours],
            &["cmd.exe", "script.bat", "/c", ours],
        ] {
            assert_eq!(command("cmd.exe", list), None, "{list:?}");
        }
    }

    #[test]
    fn powershell_and_pwsh_with_command_in_any_spelling() {
        let ours =
            r#"& 'C:\Program Files\Fabric Companion\fabric-session.exe' hook stop --host codex"#;
        for (name, list) in [
            ("powershell.exe", &["powershell.exe", "-Command", ours][..]),
            (
                "powershell.exe",
                &[
                    "powershell.exe",
                    "-NoLogo",
                    "-NoProfile",
                    "-NonInteractive",
                    "-Command",
                    ours,
                ],
            ),
            (
                "powershell.exe",
                &[
                    "powershell.exe",
                    "-ExecutionPolicy",
                    "Bypass",
                    "-command",
                    ours,
                ],
            ),
            ("powershell.exe", &["powershell.exe", "/Command", ours]),
            ("powershell.exe", &["powershell.exe", "-NoProfile", ours]),
            ("pwsh", &["/usr/bin/pwsh", "-c", ours]),
            ("pwsh", &["pwsh", "-NoProfile", "-Command", ours]),
            ("pwsh.exe", &["pwsh.exe", "--command", ours]),
            ("pwsh", &["pwsh", "-nop", "-com", ours]),
            ("pwsh", &["pwsh", "-WorkingDirectory", "C:\\p", "-c", ours]),
        ] {
            assert_eq!(command(name, list).as_deref(), Some(ours), "{list:?}");
            assert!(wraps_program(name, &argv(list), "fabric-session"));
        }
        // Split into words: the rest of the line is the command.
        let split = argv(&["pwsh", "-c", "&", "'/opt/fabric-session'", "hook", "stop"]);
        assert!(wraps_program("pwsh", &split, "fabric-session"));
        for (name, list) in [
            ("pwsh", &["pwsh"][..]),
            ("pwsh", &["pwsh", "-File", "hook.ps1"]),
            ("pwsh", &["pwsh", "hook.ps1"]),
            ("pwsh", &["pwsh", "-Command", "-"]),
            (
                "powershell.exe",
                &["powershell.exe", "-EncodedCommand", "ZQBjAGgAbwA="],
            ),
        ] {
            assert_eq!(command(name, list), None, "{list:?}");
        }
    }

    #[test]
    fn the_name_decides_and_argv0_helps_when_the_name_says_nothing() {
        // macOS `ps` may give a full path; a truncated or odd `comm` falls back to argv[0].
        assert_eq!(
            command("/bin/zsh", &["/bin/zsh", "-lc", OURS]).as_deref(),
            Some(OURS)
        );
        assert_eq!(
            command("", &["/usr/local/bin/fish", "-c", OURS]).as_deref(),
            Some(OURS)
        );
        // Not a shell at all: a host, or our own binary.
        for name in [
            "node",
            "codex",
            "claude",
            "fabric-session",
            "python3",
            "bashful",
        ] {
            assert_eq!(command(name, &[name, "-c", OURS]), None, "{name}");
        }
    }
}
