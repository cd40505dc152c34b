//! Which session needs you, with each real host in its TUI, the real tray on a real
//! StatusNotifierItem host and a real notification daemon (`real_hosts::needs_you`): a
//! permission prompt approved after the grace, one refused at once, an interrupt, a subagent's
//! prompt. Each test says the time from the prompt on screen to the icon's mark (`MEASURED`).
#![cfg(unix)] // tmux, Xvfb, D-Bus

use real_hosts::hosts::{self, Host};
use real_hosts::{desktop, needs_you};

fn run(host: Host, test: &str) {
    let Some(program) = hosts::require(host, test) else {
        return;
    };
    let missing = desktop::missing_programs();
    if !missing.is_empty() {
        let why = format!("no desktop here: {} missing", missing.join(", "));
        if hosts::required() || std::env::var_os("FABRIC_REQUIRE_DESKTOP_TESTS").is_some() {
            panic!("{test}: {why}");
        }
        hosts::say(&format!("{test}: not run: {why}"));
        return;
    }
    // Never under the temporary folder (a clone in /tmp): Codex refuses to set up its
    // helpers there (`scenario::set_base`).
    real_hosts::scenario::set_base(env!("CARGO_TARGET_TMPDIR"));
    let base = real_hosts::scenario::base_dir();
    match needs_you::prove(&program, &base) {
        Ok(measured) => {
            let marks: Vec<String> = measured
                .iter()
                .map(|m| format!("{} ms", m.to_mark.as_millis()))
                .collect();
            hosts::say(&format!(
                "MEASURED {host}: prompt on screen -> the icon's mark, each wait: {}",
                marks.join(", ")
            ));
        }
        Err(why) => panic!("{test}: {why}"),
    }
}

#[test]
fn claude_code_needs_you() {
    run(Host::Claude, "claude_code_needs_you");
}

#[test]
fn codex_needs_you() {
    run(Host::Codex, "codex_needs_you");
}

#[test]
fn kimi_code_needs_you() {
    run(Host::Kimi, "kimi_code_needs_you");
}
