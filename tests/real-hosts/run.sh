#!/usr/bin/env bash
# The real-hosts suite, for real: installs the pinned hosts (install-hosts.sh, cache reused),
# then runs the suite's tests (`cargo test --workspace --test claude --test codex --test kimi
# --test needs_you --test remote`) with the variables that point them at the hosts. `needs_you`
# runs each host's TUI in tmux with the real tray on a virtual desktop (Xvfb, dbus, dunst, an
# SNI host); `remote` runs Claude Code in tmux as another user behind a real sshd, followed by
# the tray over ssh (needs root).
# FABRIC_REAL_HOSTS_REQUIRED=1 makes a host that is missing a failure instead of "not run".
# Extra arguments go to the test binaries (a test name filter, --nocapture, …).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${FABRIC_TEST_HOSTS_CACHE:-$HOME/.cache/fabric-companion-test-hosts}
export FABRIC_TEST_HOSTS_CACHE=$cache
start=$(date +%s)
bash "$root/tests/real-hosts/install-hosts.sh"
echo "== hosts ready in $(( $(date +%s) - start )) s"
set -a
# shellcheck disable=SC1091
. "$cache/hosts.env"
set +a
export FABRIC_REAL_HOSTS_REQUIRED=1
# The remote test makes a Unix user and starts sshd: here it may not skip itself.
export FABRIC_REQUIRE_DESKTOP_TESTS=1
cd "$root"
# The three host test binaries, built as `cargo test --workspace` builds them (so after
# scripts/test.sh's own cargo test nothing is compiled again; `-p real-hosts` would resolve
# other features and rebuild tokio and friends). One test at a time: each session already
# keeps the two cores busy, and the wall-time figures are only comparable without a neighbour.
cargo test --workspace --locked --no-fail-fast --test claude --test codex --test kimi \
  --test needs_you --test remote -- --test-threads=1 "$@"
echo "== real-hosts suite done in $(( $(date +%s) - start )) s"
