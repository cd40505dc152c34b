//! Codex runs whole sessions with our hooks (see `real_hosts::checks` for what each test holds
//! the product to). Without the host installed every test says "not run" and why; run
//! `tests/real-hosts/run.sh` to install the pinned version and run them for real.

real_hosts::host_tests!(real_hosts::Host::Codex);

#[test]
fn an_approved_hook_runs_and_an_unapproved_one_does_not() {
    if let Some(p) = program("an_approved_hook_runs_and_an_unapproved_one_does_not") {
        real_hosts::checks::codex_approval(&p);
    }
}

#[test]
fn status_says_what_is_left_to_approve() {
    if let Some(p) = program("status_says_what_is_left_to_approve") {
        real_hosts::checks::codex_status_tells_what_is_left(&p);
    }
}

#[test]
fn an_upgrade_of_our_binary_keeps_codex_s_approval() {
    if let Some(p) = program("an_upgrade_of_our_binary_keeps_codex_s_approval") {
        real_hosts::checks::an_upgrade_keeps_codex_s_approval(&p);
    }
}
