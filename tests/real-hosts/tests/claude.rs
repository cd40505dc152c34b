//! Claude Code runs whole sessions with our hooks (see `real_hosts::checks` for what each test holds
//! the product to). Without the host installed every test says "not run" and why; run
//! `tests/real-hosts/run.sh` to install the pinned version and run them for real.

real_hosts::host_tests!(real_hosts::Host::Claude);

#[test]
fn the_session_is_recorded_with_claude_code_s_own_pid() {
    if let Some(p) = program("the_session_is_recorded_with_claude_code_s_own_pid") {
        real_hosts::checks::the_session_is_recorded_with_the_host_s_pid(&p);
    }
}
