//! The pure parsing behind the platform readers, compiled everywhere it is used and in tests
//! on every OS: a Windows command line split into arguments (the rules of the Microsoft C
//! runtime), and macOS's `KERN_PROCARGS2` buffer. Never touches the system.

/// Splits a Windows command line (`GetCommandLineW`, `ProcessCommandLineInformation`) into
/// arguments the way the Microsoft C runtime (2008 and later) builds `argv`:
///
/// - the program name (first word) ends at the closing quote when it starts with one, else
///   at the first space or tab, and backslashes in it are plain characters;
/// - after it, spaces and tabs outside quotes separate arguments;
/// - `2n` backslashes before a `"` give `n` backslashes and the quote opens or closes a
///   quoted stretch; `2n + 1` give `n` backslashes and a literal `"`; backslashes before
///   anything else stay as they are;
/// - inside a quoted stretch, `""` is a literal `"`.
#[cfg(any(windows, test))]
pub(crate) fn split_windows_command_line(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut args = Vec::new();
    let mut i = 0;
    // The program name.
    let mut program = String::new();
    if chars.first() == Some(&'"') {
        i = 1;
        while i < chars.len() && chars[i] != '"' {
            program.push(chars[i]);
            i += 1;
        }
        i += 1; // the closing quote
    } else {
        while i < chars.len() && chars[i] != ' ' && chars[i] != '\t' {
            program.push(chars[i]);
            i += 1;
        }
    }
    if chars.is_empty() {
        return args;
    }
    args.push(program);
    loop {
        while i < chars.len() && (chars[i] == ' ' || chars[i] == '\t') {
            i += 1;
        }
        if i >= chars.len() {
            break;
        }
        let mut arg = String::new();
        let mut quoted = false;
        while i < chars.len() {
            let c = chars[i];
            if c == '\\' {
                let mut backslashes = 0;
                while i < chars.len() && chars[i] == '\\' {
                    backslashes += 1;
                    i += 1;
                }
                if i < chars.len() && chars[i] == '"' {
                    arg.extend(std::iter::repeat_n('\\', backslashes / 2));
                    if backslashes % 2 == 1 {
                        arg.push('"');
                        i += 1;
                    }
                    // An even count leaves the quote to the next turn of the loop.
                } else {
                    arg.extend(std::iter::repeat_n('\\', backslashes));
                }
                continue;
            }
            if c == '"' {
                if quoted && chars.get(i + 1) == Some(&'"') {
                    arg.push('"');
                    i += 2;
                    continue;
                }
                quoted = !quoted;
                i += 1;
                continue;
            }
            if !quoted && (c == ' ' || c == '\t') {
                break;
            }
            arg.push(c);
            i += 1;
        }
        args.push(arg);
    }
    args
}

/// A Windows executable's name as process facts report it: the file name without `.exe`,
/// lowercased (Windows names are case-insensitive). `C:\Program Files\Git\usr\bin\bash.exe`
/// → `bash`, `C:\Windows\System32\WindowsPowerShell\v1.0\PowerShell.EXE` → `powershell`.
#[cfg(any(windows, test))]
pub(crate) fn windows_executable_name(path: &str) -> String {
    let file = path.rsplit(['\\', '/']).next().unwrap_or(path);
    let lower = file.to_lowercase();
    match lower.strip_suffix(".exe") {
        Some(stem) => stem.to_string(),
        None => lower,
    }
}

/// Reads the arguments out of a macOS `sysctl(KERN_PROCARGS2)` buffer: a native-endian
/// `int` argument count, the executable's path, NUL padding, then `argc` NUL-terminated
/// arguments (the environment follows and is never read). `None` for a malformed buffer.
#[cfg(any(target_os = "macos", test))]
pub(crate) fn parse_procargs2(buffer: &[u8]) -> Option<Vec<String>> {
    let count_bytes: [u8; 4] = buffer.get(..4)?.try_into().ok()?;
    let argc = usize::try_from(i32::from_ne_bytes(count_bytes)).ok()?;
    let rest = &buffer[4..];
    // Skip the executable path and the padding after it.
    let path_end = rest.iter().position(|&b| b == 0)?;
    let mut at = path_end;
    while rest.get(at) == Some(&0) {
        at += 1;
    }
    let mut args = Vec::with_capacity(argc.min(256));
    for _ in 0..argc {
        let tail = rest.get(at..)?;
        let end = tail.iter().position(|&b| b == 0)?;
        args.push(String::from_utf8_lossy(&tail[..end]).into_owned());
        at += end + 1;
    }
    Some(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Vec<String> {
        split_windows_command_line(line)
    }

    #[test]
    fn windows_command_lines_split_as_the_c_runtime_does() {
        let cases: &[(&str, &[&str])] = &[
            (
                r#"cmd.exe /d /s /c "a b""#,
                &["cmd.exe", "/d", "/s", "/c", "a b"],
            ),
            (
                r#""C:\Program Files\Git\bin\bash.exe" -c "x y""#,
                &[r"C:\Program Files\Git\bin\bash.exe", "-c", "x y"],
            ),
            // Backslashes in the program name are plain, even before the closing quote.
            (r#""C:\a b\" z"#, &[r"C:\a b\", "z"]),
            (r#"p a\\\"b"#, &["p", r#"a\"b"#]),
            (r#"p "a\\" b"#, &["p", r"a\", "b"]),
            (r#"p a\\b c\d"#, &["p", r"a\\b", r"c\d"]),
            (r#"p "a ""quoted"" b""#, &["p", r#"a "quoted" b"#]),
            (r#"p a"b c"d e"#, &["p", "ab cd", "e"]),
            ("p\t a \t", &["p", "a"]),
            (r#"p """#, &["p", ""]),
            (
                r#"C:\Users\me\AppData\Local\fabric-companion\bin\fabric-session.exe hook stop --host codex"#,
                &[
                    r"C:\Users\me\AppData\Local\fabric-companion\bin\fabric-session.exe",
                    "hook",
                    "stop",
                    "--host",
                    "codex",
                ],
            ),
            (
                r#"claude.exe --mcp-config "C:\Users\a b\AppData\Local\passioncode-fabric\sessions\s-1\mcp.json""#,
                &[
                    "claude.exe",
                    "--mcp-config",
                    r"C:\Users\a b\AppData\Local\passioncode-fabric\sessions\s-1\mcp.json",
                ],
            ),
        ];
        for (line, want) in cases {
            assert_eq!(split(line), *want, "{line}");
        }
        assert!(split("").is_empty());
    }

    #[test]
    fn windows_executable_names() {
        let cases = [
            (r"C:\Program Files\Git\usr\bin\bash.exe", "bash"),
            (
                r"C:\Windows\System32\WindowsPowerShell\v1.0\PowerShell.EXE",
                "powershell",
            ),
            (r"C:\Program Files\PowerShell\7\pwsh.exe", "pwsh"),
            (r"C:\Windows\system32\cmd.exe", "cmd"),
            ("C:/tools/claude.exe", "claude"),
            ("node", "node"),
        ];
        for (path, name) in cases {
            assert_eq!(windows_executable_name(path), name, "{path}");
        }
    }

    fn procargs(argc: i32, path: &str, padding: usize, args: &[&str], env: &[&str]) -> Vec<u8> {
        let mut buffer = argc.to_ne_bytes().to_vec();
        buffer.extend_from_slice(path.as_bytes());
        buffer.extend(std::iter::repeat_n(0u8, 1 + padding));
        for arg in args.iter().chain(env) {
            buffer.extend_from_slice(arg.as_bytes());
            buffer.push(0);
        }
        buffer
    }

    #[test]
    fn procargs2_buffers_give_the_arguments_only() {
        let buffer = procargs(
            3,
            "/bin/zsh",
            7,
            &["zsh", "-c", "fabric-session hook session-start"],
            &["HOME=/Users/a", "SECRET=never-read"],
        );
        assert_eq!(
            parse_procargs2(&buffer).unwrap(),
            ["zsh", "-c", "fabric-session hook session-start"]
        );
        let no_padding = procargs(1, "/usr/bin/claude", 0, &["claude"], &[]);
        assert_eq!(parse_procargs2(&no_padding).unwrap(), ["claude"]);
        // Malformed: too short, a count past the end, no terminator.
        assert_eq!(parse_procargs2(&[1, 0]), None);
        let truncated = procargs(4, "/bin/sh", 0, &["sh", "-c"], &[]);
        assert_eq!(parse_procargs2(&truncated), None);
        let mut unterminated = procargs(1, "/bin/sh", 0, &[], &[]);
        unterminated.extend_from_slice(b"sh");
        assert_eq!(parse_procargs2(&unterminated), None);
        assert_eq!(parse_procargs2(&procargs(-1, "/bin/sh", 0, &[], &[])), None);
    }
}
