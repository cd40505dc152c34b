#!/usr/bin/env bash
# The platform part of the test command: what runs natively on Linux, macOS and Windows alike
# (CI's matrix runs it on macOS and Windows; on Linux scripts/test.sh runs all of it and
# more). Assumes Rust (with rustfmt and clippy) and Node are installed.
#
# - the dashboard's front end (the Tauri crate embeds ui/dist);
# - formatting, and clippy on the whole workspace with warnings denied, for this OS;
# - the tests that need no Linux desktop: companion-platform's process facts read through this
#   OS's own APIs (a live process, an exited one, our parent), its path and hook-command
#   tables, companion-hosts' hook command, and the bundle configuration as Tauri parses it.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== ui: npm ci, build"
(cd ui && npm ci --no-audit --no-fund --loglevel=error && npm run build)
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (warnings denied)"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== tests that run on every OS"
cargo test --locked -p companion-platform --lib -- process:: paths:: platform::
cargo test --locked -p companion-hosts --lib -- hook_command::
cargo test --locked -p fabric-companion --test bundle_config
