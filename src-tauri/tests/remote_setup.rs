//! The dashboard's "Set up…" for a remote (`remote_setup::{prepare, apply}`, what its two
//! commands run off the page's thread) against a real OpenSSH remote (test-support's
//! `ssh_remote`: Debian's sshd on a loopback port, a fresh Unix user): our program copied and
//! checked, the plan and its digest given back with nothing applied, a wrong digest refused
//! with nothing changed, the right one applied there and the remote followed here; taken down
//! only as the removal plans shown say; a remote whose host key is not known yet says the
//! `ssh` command to run, in one line.
//! Linux, as root (a user is made for the remote).
#![cfg(target_os = "linux")]

use companion_hosts::host::Host;
use companion_platform::paths::Paths;
use companion_sessions::settings;
use fabric_companion::remote_setup::{ShownDigest, apply, prepare, removal, take_down};
use test_support::ssh_remote::{ALIAS, PROGRAM, SshRemote};

fn followed(paths: &Paths) -> Vec<String> {
    settings::load(&settings::settings_path(paths)).remotes
}

#[test]
fn set_up_shows_the_plan_and_applies_only_the_digest_shown() {
    let Some(remote) = SshRemote::start("remote_setup::set_up") else {
        return;
    };
    let ours = test_support::programs::session_binary();
    // SAFETY: this test binary has this one test; no other thread reads the environment.
    unsafe {
        std::env::set_var("FABRIC_SSH_CONFIG", remote.config());
        std::env::set_var("FABRIC_SESSION_BIN", &ours);
    }
    let home = tempfile::tempdir().unwrap();
    let paths = test_support::files::paths_in(home.path());
    let program = remote.home().join(PROGRAM);
    let claude_settings = remote.home().join(".claude/settings.json");

    // Before consent: our program copied and checked, the plan and its digest given back.
    let plan = prepare(&paths, ALIAS, Host::Claude)
        .unwrap_or_else(|err| panic!("{err}\nsshd: {}", remote.sshd_log()));
    let bytes = std::fs::read(&ours).unwrap();
    assert_eq!(std::fs::read(&program).unwrap(), bytes, "the copy differs");
    assert_eq!(
        plan.program_sha256,
        companion_hosts::install::sha256_hex(&bytes)
    );
    assert_eq!(plan.remote, ALIAS);
    assert_eq!(plan.machine, "x86_64");
    assert!(plan.changes);
    assert!(
        plan.plan_text.starts_with(&format!(
            "Claude Code on {ALIAS}: {}\n",
            claude_settings.display()
        )),
        "{}",
        plan.plan_text
    );
    assert!(plan.plan_text.contains("Would add"), "{}", plan.plan_text);
    assert!(
        plan.plan_text
            .contains(&format!("Plan digest: {}\n", plan.digest)),
        "{}",
        plan.plan_text
    );
    assert!(!claude_settings.exists(), "applied before consent");
    assert!(followed(&paths).is_empty(), "followed before consent");

    // A digest the person did not see: refused there in one line; nothing changes anywhere.
    let wrong = format!("sha256:{}", "0".repeat(64));
    let refused = apply(&paths, ALIAS, Host::Claude, &wrong)
        .unwrap_err()
        .to_string();
    assert!(refused.starts_with(&format!("{ALIAS}: ")), "{refused}");
    assert!(!refused.contains('\n'), "{refused}");
    assert!(!claude_settings.exists(), "applied with a wrong digest");
    assert!(
        !settings::settings_path(&paths).exists(),
        "settings written on a refusal"
    );

    // The digest shown: applied there (the hooks run the remote's stable copy), followed here.
    let done = apply(&paths, ALIAS, Host::Claude, &plan.digest)
        .unwrap_or_else(|err| panic!("{err}\nsshd: {}", remote.sshd_log()));
    assert!(done.followed);
    assert_eq!(done.settings.form.remotes, [ALIAS]);
    assert_eq!(followed(&paths), [ALIAS]);
    let written = std::fs::read_to_string(&claude_settings).unwrap();
    let hooks: serde_json::Value = serde_json::from_str(&written).unwrap();
    for event in ["SessionStart", "UserPromptSubmit", "Stop"] {
        let entry = hooks["hooks"][event].to_string();
        assert!(
            entry.contains(&format!("{} hook", program.display())),
            "{event}: {written}"
        );
    }

    // Set up again: the copy is current, the plan has nothing to do, and nothing is doubled.
    let again = prepare(&paths, ALIAS, Host::Claude).unwrap();
    assert!(!again.changes, "{}", again.plan_text);
    let done = apply(&paths, ALIAS, Host::Claude, &again.digest).unwrap();
    assert!(!done.followed, "followed twice");
    assert_eq!(followed(&paths), [ALIAS]);
    assert_eq!(std::fs::read_to_string(&claude_settings).unwrap(), written);

    // Take down: each host's removal plan; a digest not shown takes nothing out.
    let plans = removal(ALIAS).unwrap();
    assert_eq!(
        plans.hosts.iter().map(|h| h.host).collect::<Vec<_>>(),
        [Host::Claude]
    );
    assert!(
        plans.hosts[0].plan_text.contains("Would take out"),
        "{}",
        plans.hosts[0].plan_text
    );
    let not_shown = [ShownDigest {
        host: Host::Claude,
        digest: wrong.clone(),
    }];
    let refused = take_down(&paths, ALIAS, &not_shown)
        .unwrap_err()
        .to_string();
    assert!(refused.starts_with(&format!("{ALIAS}: ")), "{refused}");
    assert!(!refused.contains('\n'), "{refused}");
    assert_eq!(std::fs::read_to_string(&claude_settings).unwrap(), written);
    assert!(
        program.exists(),
        "the program went with its hooks still there"
    );
    assert_eq!(followed(&paths), [ALIAS]);
    // Hooks that were not in the plans shown keep the program there, said in one line.
    let refused = take_down(&paths, ALIAS, &[]).unwrap_err().to_string();
    assert_eq!(
        refused,
        format!(
            "{ALIAS}: Claude Code runs fabric-session there, and that was not in the plan shown: fabric-session stays there; look at the plan again"
        )
    );
    assert!(
        program.exists(),
        "the program went with its hooks still there"
    );
    // The plans shown: our hooks out, the program removed, the remote no longer followed.
    let shown: Vec<ShownDigest> = plans
        .hosts
        .iter()
        .map(|h| ShownDigest {
            host: h.host,
            digest: h.digest.clone(),
        })
        .collect();
    let done = take_down(&paths, ALIAS, &shown)
        .unwrap_or_else(|err| panic!("{err}\nsshd: {}", remote.sshd_log()));
    assert!(done.unfollowed);
    assert!(done.settings.form.remotes.is_empty());
    assert!(followed(&paths).is_empty());
    assert!(!program.exists(), "the program stayed");
    let left = std::fs::read_to_string(&claude_settings).unwrap_or_default();
    assert!(!left.contains("fabric-session"), "{left}");
    assert!(removal(ALIAS).unwrap().hosts.is_empty());

    // A remote that needs a person first says what to run, in one line.
    // SAFETY: as above.
    unsafe { std::env::set_var("FABRIC_SSH_CONFIG", remote.config_unknown_host()) };
    let line = prepare(&paths, ALIAS, Host::Claude)
        .unwrap_err()
        .to_string();
    assert_eq!(
        line,
        format!(
            "{ALIAS}: its host key is not known yet: run `ssh -F {} {ALIAS}` once",
            remote.config_unknown_host().display()
        )
    );
}
