//! `host-stand-in`: an agent host as far as its hooks can tell, on Windows. It stays running
//! (the host process a session is recorded with) and runs each hook command it is given the
//! way that host runs one there, through the same shell with the same quoting, feeding the
//! hook's input on stdin and reading its stdout and stderr to their end, as the hosts do
//! (Codex's `wait_with_output`, Node's pipes): a hook whose detached worker kept a pipe open
//! would hold it up, and that shows.
//!
//! - `--shell codex`: `%COMSPEC% /C <command>`, the command one argument in the standard
//!   library's quoting (Codex's `default_shell_command`);
//! - `--shell kimi`: `cmd.exe /d /s /c "<command>"`, verbatim (Node's `spawn` with
//!   `shell: true`, Kimi Code's);
//! - `--shell direct`: for Claude Code, which runs a hook through Git Bash (`bash -c`), not
//!   available here: the command's program is run with its arguments, as bash runs a plain
//!   command; a leading `[ ! -x <program> ] || ` is bash's test, done here.
//!
//! `--job breakaway-ok` (as a host's job that kills what is left of a hook when it ends:
//! `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE` with breakaway allowed) or `--job strict` (no
//! breakaway): the shell runs in a job object that is ended (`TerminateJobObject`) as soon as
//! the hook has exited and its output is read.
//!
//! Protocol: the first line out is `{"pid": <this process>}`. Then one JSON request per line
//! in, `{"command": "...", "input": "...", "timeout_ms": 30000}`, one JSON answer per line
//! out, `{"code": <exit code or null>, "stdout": "...", "stderr": "...", "elapsed_ms": <n>,
//! "timed_out": <bool>}`. It exits 0 when its stdin closes.
//!
//! With `HOST_STAND_IN_RECORD=<file>` set, every start first appends `{"started": [args…]}` to
//! that file: the stand-in then also plays a program another starts (the dashboard the tray
//! opens, which Wine cannot run).
//!
//! `host-stand-in --lock <file>` is another program holding a file open with no sharing at all
//! (an editor, a backup or antivirus tool): it creates the file if needed, prints
//! `{"locked": true}`, and keeps it until its stdin closes.
//!
//! Test scaffolding for `tests/wine`; never shipped.

use std::io::{BufRead, Read, Write};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shell {
    Codex,
    Kimi,
    Direct,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Job {
    None,
    BreakawayOk,
    Strict,
}

struct Options {
    shell: Shell,
    job: Job,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        shell: Shell::Codex,
        job: Job::None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or(format!("{arg} needs a value"))?;
        match (arg.as_str(), value.as_str()) {
            ("--shell", "codex") => options.shell = Shell::Codex,
            ("--shell", "kimi") => options.shell = Shell::Kimi,
            ("--shell", "direct") => options.shell = Shell::Direct,
            ("--job", "none") => options.job = Job::None,
            ("--job", "breakaway-ok") => options.job = Job::BreakawayOk,
            ("--job", "strict") => options.job = Job::Strict,
            _ => return Err(format!("unknown option {arg} {value}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(record) = std::env::var_os("HOST_STAND_IN_RECORD") {
        let line = format!("{}\n", json!({"started": args}));
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(record)
            .and_then(|mut file| file.write_all(line.as_bytes()));
        if args.is_empty() {
            return ExitCode::SUCCESS;
        }
    }
    if let [flag, path] = args.as_slice()
        && flag == "--lock"
    {
        return hold_locked(path);
    }
    let options = match parse_options() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("host-stand-in: {e}");
            return ExitCode::from(2);
        }
    };
    let mut out = std::io::stdout().lock();
    let say = |out: &mut std::io::StdoutLock<'_>, value: Value| {
        let _ = writeln!(out, "{value}");
        let _ = out.flush();
    };
    say(&mut out, json!({"pid": std::process::id()}));
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let answer = match serde_json::from_str::<Value>(&line) {
            Ok(request) => run(&options, &request),
            Err(e) => json!({"error": format!("not a request: {e}")}),
        };
        say(&mut out, answer);
    }
    ExitCode::SUCCESS
}

/// Holds `path` open with no sharing until stdin closes.
fn hold_locked(path: &str) -> ExitCode {
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(windows)]
    std::os::windows::fs::OpenOptionsExt::share_mode(&mut options, 0);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) => {
            eprintln!("host-stand-in: cannot lock {path}: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{}", json!({"locked": true}));
    let _ = std::io::stdout().flush();
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    drop(file);
    ExitCode::SUCCESS
}

/// `ERROR_INTERNAL_ERROR`: what Wine 8.0's `CreateProcess` now and then fails with when many
/// processes start at once (the new process died before it finished starting; seen in the Wine
/// suite's parallel runs, about one start in a few hundred under load). The child never ran,
/// so nothing of the hook was done.
const WINE_START_FAILURE: i32 = 1359;

/// [`job::spawn`], started again (at most three times in all) when Wine failed to start the
/// process at all ([`WINE_START_FAILURE`]): the stand-in is scaffolding for the host, and a
/// start Wine lost is not a result of the program under test. Any other error is the answer.
fn spawn_retrying_wine(
    process: &mut Command,
    job: Job,
) -> std::io::Result<(std::process::Child, job::Handle)> {
    let mut attempt = 1;
    loop {
        match job::spawn(process, job) {
            Err(e) if e.raw_os_error() == Some(WINE_START_FAILURE) && attempt < 3 => {
                eprintln!("host-stand-in: Wine could not start the process ({e}); again");
                attempt += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            result => return result,
        }
    }
}

/// Runs one request and gives its answer.
fn run(options: &Options, request: &Value) -> Value {
    let command = request["command"].as_str().unwrap_or_default();
    let input = request["input"].as_str().unwrap_or_default().to_owned();
    let timeout = Duration::from_millis(request["timeout_ms"].as_u64().unwrap_or(30_000));
    let started = Instant::now();
    let mut process = match shell_command(options.shell, command) {
        Ok(Some(process)) => process,
        // The guard found no program: bash would exit 0 without a word.
        Ok(None) => return answer(Some(0), "", "", started, false),
        Err(e) => return json!({"error": e}),
    };
    process
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match spawn_retrying_wine(&mut process, options.job) {
        Ok(child) => child,
        Err(e) => return json!({"error": format!("cannot start the shell: {e}")}),
    };
    let (child_process, job) = (&mut child.0, &child.1);
    let mut stdin = child_process.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let readers = [
        read_to_end(child_process.stdout.take().expect("piped")),
        read_to_end(child_process.stderr.take().expect("piped")),
    ];
    // Like the hosts: done when the process has exited and both pipes are at their end.
    let mut code = None;
    let mut timed_out = false;
    loop {
        if code.is_none()
            && let Ok(Some(status)) = child_process.try_wait()
        {
            code = Some(status.code());
        }
        if code.is_some() && readers.iter().all(|r| r.is_finished()) {
            break;
        }
        if started.elapsed() > timeout {
            timed_out = true;
            let _ = child_process.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = writer.join();
    // The host is done with this hook: its job ends, and whatever is left in it.
    job.end();
    let [stdout, stderr] = readers;
    let text = |reader: std::thread::JoinHandle<Vec<u8>>| {
        if reader.is_finished() {
            String::from_utf8_lossy(&reader.join().unwrap_or_default()).into_owned()
        } else {
            String::new()
        }
    };
    answer(
        code.flatten(),
        &text(stdout),
        &text(stderr),
        started,
        timed_out,
    )
}

fn answer(
    code: Option<i32>,
    stdout: &str,
    stderr: &str,
    started: Instant,
    timed_out: bool,
) -> Value {
    json!({
        "code": code,
        "stdout": stdout,
        "stderr": stderr,
        "elapsed_ms": started.elapsed().as_millis() as u64,
        "timed_out": timed_out,
    })
}

fn read_to_end(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// The shell process that runs `command` as the host would; `None` when a guard says there is
/// nothing to run.
fn shell_command(shell: Shell, command: &str) -> Result<Option<Command>, String> {
    let comspec = std::env::var("COMSPEC").unwrap_or_else(|_| "cmd.exe".into());
    match shell {
        Shell::Codex => {
            let mut process = Command::new(comspec);
            process.arg("/C").arg(command);
            Ok(Some(process))
        }
        Shell::Kimi => {
            let mut process = Command::new("cmd.exe");
            verbatim(&mut process, &format!("/d /s /c \"{command}\""));
            Ok(Some(process))
        }
        Shell::Direct => {
            let words = split_words(command)?;
            let words = match words.as_slice() {
                [open, not, x, tested, close, or, rest @ ..]
                    if open == "[" && not == "!" && x == "-x" && close == "]" && or == "||" =>
                {
                    if !std::path::Path::new(tested).is_file() {
                        return Ok(None);
                    }
                    rest.to_vec()
                }
                _ => words,
            };
            let (program, args) = words.split_first().ok_or("an empty command")?;
            let mut process = Command::new(program);
            process.args(args);
            Ok(Some(process))
        }
    }
}

#[cfg(windows)]
fn verbatim(process: &mut Command, text: &str) {
    use std::os::windows::process::CommandExt;
    process.raw_arg(text);
}

#[cfg(not(windows))]
fn verbatim(process: &mut Command, text: &str) {
    process.arg(text);
}

/// Splits a command into words as bash would for a plain command: spaces separate, single and
/// double quotes group (no escapes: the commands we write hold none).
fn split_words(command: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    if quote.is_some() {
        return Err("an unterminated quote".into());
    }
    words.extend(word);
    Ok(words)
}

/// The host's job object around the shell.
mod job {
    use std::process::{Child, Command};

    use super::Job;

    /// A job (Windows) or nothing; ended at most once.
    pub struct Handle(#[cfg(windows)] Option<windows_sys::Win32::Foundation::HANDLE>);

    impl Handle {
        /// Ends every process still in the job (the host's job closing).
        pub fn end(&self) {
            #[cfg(windows)]
            if let Some(job) = self.0 {
                use windows_sys::Win32::System::JobObjects::TerminateJobObject;
                // SAFETY: the job handle is open until drop.
                unsafe { TerminateJobObject(job, 1) };
            }
        }
    }

    impl Drop for Handle {
        fn drop(&mut self) {
            #[cfg(windows)]
            if let Some(job) = self.0 {
                // SAFETY: closed once; KILL_ON_JOB_CLOSE ends what is left.
                unsafe { windows_sys::Win32::Foundation::CloseHandle(job) };
            }
        }
    }

    /// Starts `process`, in a job when asked: created suspended, put in the job, resumed, so
    /// that nothing it starts escapes the job by starting first.
    #[cfg(windows)]
    pub fn spawn(process: &mut Command, job: Job) -> std::io::Result<(Child, Handle)> {
        use std::os::windows::io::AsRawHandle;
        use std::os::windows::process::CommandExt;
        use windows_sys::Win32::System::JobObjects::{
            AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_BREAKAWAY_OK,
            JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
            JobObjectExtendedLimitInformation, SetInformationJobObject,
        };
        use windows_sys::Win32::System::Threading::CREATE_SUSPENDED;
        #[link(name = "ntdll")]
        unsafe extern "system" {
            /// Resumes every thread of a process (the standard library does not give the
            /// child's main thread handle on stable).
            fn NtResumeProcess(process: windows_sys::Win32::Foundation::HANDLE) -> i32;
        }
        if job == Job::None {
            return Ok((process.spawn()?, Handle(None)));
        }
        // SAFETY: no security attributes, no name.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(std::io::Error::last_os_error());
        }
        let guard = Handle(Some(handle));
        // SAFETY: plain old data; zeroed is valid.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
            | if job == Job::BreakawayOk {
                JOB_OBJECT_LIMIT_BREAKAWAY_OK
            } else {
                0
            };
        // SAFETY: the structure is the size passed, for this information class.
        let ok = unsafe {
            SetInformationJobObject(
                handle,
                JobObjectExtendedLimitInformation,
                (&raw const limits).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        process.creation_flags(CREATE_SUSPENDED);
        let child = process.spawn()?;
        // SAFETY: both handles are open (the child's until it is dropped).
        unsafe {
            if AssignProcessToJobObject(handle, child.as_raw_handle()) == 0 {
                return Err(std::io::Error::last_os_error());
            }
            NtResumeProcess(child.as_raw_handle());
        }
        Ok((child, guard))
    }

    #[cfg(not(windows))]
    pub fn spawn(process: &mut Command, job: Job) -> std::io::Result<(Child, Handle)> {
        if job != Job::None {
            return Err(std::io::Error::other("job objects are Windows only"));
        }
        Ok((process.spawn()?, Handle()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_as_bash_splits_a_plain_command() {
        assert_eq!(
            split_words(r#"[ ! -x C:/a/fabric-session.exe ] || "C:/a b/x.exe" hook stop"#).unwrap(),
            [
                "[",
                "!",
                "-x",
                "C:/a/fabric-session.exe",
                "]",
                "||",
                "C:/a b/x.exe",
                "hook",
                "stop"
            ]
        );
        assert!(split_words("'open").is_err());
    }
}
