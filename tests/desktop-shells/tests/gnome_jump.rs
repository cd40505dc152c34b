//! The jump on GNOME Shell's Wayland session (headless GNOME Shell 43), through our own
//! GNOME Shell extension as the Linux package ships it: two real sessions (the real
//! session-start hook run by a "host" in each of two real foot windows), and
//! `fabric-session focus` brings the right window to the front, on its workspace, read back
//! from the shell itself (the probe's focused window); a gone session raises nothing;
//! with the extension off, exit 4, how to turn it on, and where the session is.
#![cfg(target_os = "linux")]

use desktop_shells::gnome::{self, FOCUS, GnomeShell};
use desktop_shells::{WAIT, require, terminal, wait_until};

fn available(test: &str) -> bool {
    gnome::available(test) && require(test, &["foot"], "foot")
}

#[test]
fn the_jump_on_gnome_raises_the_right_window_through_our_extension() {
    let test = "the_jump_on_gnome_raises_the_right_window_through_our_extension";
    if !available(test) {
        return;
    }
    let mut shell = GnomeShell::start("gnome-jump", "two-windows", &[FOCUS]);
    shell.wire_claude_and_fabric();
    let alpha_script = shell.host_script("jump-alpha", "alpha");
    let beta_script = shell.host_script("jump-beta", "beta");
    let foot_alpha = terminal::foot(&mut shell, "foot-alpha", &alpha_script);
    shell.wait_for_window(foot_alpha);
    let alpha = shell.recorded_host("jump-alpha");
    let foot_beta = terminal::foot(&mut shell, "foot-beta", &beta_script);
    shell.wait_for_window(foot_beta);
    let beta = shell.recorded_host("jump-beta");
    // The hook recorded the host in each window (the shell running the script, now `sleep`).
    assert_ne!(alpha.host_pid, beta.host_pid);
    // Beta's window in front, as a person would have it (a click, here the shell's own call).
    shell.activate_window_of(foot_beta);
    assert_eq!(shell.focused().map(|f| f.0), Some(foot_beta));

    // 1. Alpha: its window comes to the front.
    let (code, out, err) = shell.focus("jump-alpha");
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains(&format!("pid {foot_alpha}")), "{out}");
    assert_eq!(shell.focused().map(|f| f.0), Some(foot_alpha));

    // 2. Beta, then alpha again on another workspace: the shell switches to it.
    let (code, out, err) = shell.focus("jump-beta");
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(shell.focused().map(|f| f.0), Some(foot_beta));
    shell.eval(&format!(
        "const win = global.display.get_tab_list(Meta.TabList.NORMAL_ALL, null)
             .find(w => w.get_pid() === {foot_alpha});
         win.change_workspace_by_index(1, false);
         global.workspace_manager.get_workspace_by_index(0).activate(global.get_current_time());
         global.workspace_manager.get_active_workspace_index()"
    ));
    let (code, out, err) = shell.focus("jump-alpha");
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(shell.focused().map(|f| f.0), Some(foot_alpha));
    assert_eq!(
        shell.eval("global.workspace_manager.get_active_workspace_index()"),
        serde_json::json!(1),
        "the jump switched to alpha's workspace"
    );
    let _ = shell.screenshot("alpha-raised", 0, 0, 1280, 800);

    // 3. A gone session raises nothing (exit 3): beta's host ends.
    // SAFETY: a signal to the host process this test started (through foot).
    unsafe {
        libc::kill(beta.host_pid as libc::pid_t, libc::SIGKILL);
    }
    wait_until("beta's host to be gone", WAIT, || {
        (!std::path::Path::new(&format!("/proc/{}", beta.host_pid)).exists()
            || std::fs::read_to_string(format!("/proc/{}/stat", beta.host_pid))
                .unwrap_or_default()
                .contains(") Z "))
        .then_some(())
    });
    let before = shell.focused();
    let (code, out, err) = shell.focus("jump-beta");
    assert_eq!(code, Some(3), "{out}{err}");
    assert_eq!(shell.focused(), before, "a gone session raised something");

    // 4. The extension off (the person's choice): exit 4, how to turn it on, where it is.
    shell.focus("jump-beta");
    shell.eval(
        "const ws = global.workspace_manager.get_workspace_by_index(0); ws.activate(global.get_current_time()); 0",
    );
    let before = shell.focused();
    shell.set_extension(FOCUS, false);
    let (code, out, err) = shell.focus("jump-alpha");
    assert_eq!(code, Some(4), "{out}{err}");
    assert!(
        err.contains("gnome-extensions enable fabric-companion-focus@passioncode.ai"),
        "{err}"
    );
    assert!(err.contains("installed but off"), "{err}");
    assert!(err.contains("alpha (Claude Code)"), "{err}");
    assert!(err.contains("terminal foot"), "{err}");
    assert_eq!(shell.focused(), before);

    // 5. On again: the jump works again.
    shell.set_extension(FOCUS, true);
    let (code, out, err) = wait_until("the extension back on", WAIT, || {
        let answer = shell.focus("jump-alpha");
        (answer.0 == Some(0)).then_some(answer)
    });
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(shell.focused().map(|f| f.0), Some(foot_alpha));
}
