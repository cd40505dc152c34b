#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what it needs, then checks
# formatting, lints with warnings denied, and runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

# System packages the tests use (installed only when missing).
need=()
command -v git >/dev/null 2>&1 || need+=(git)
command -v mkfifo >/dev/null 2>&1 || need+=(coreutils)
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
  else
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
  fi
fi

rustup component add rustfmt clippy >/dev/null 2>&1 || true

echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy (warnings denied)"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --workspace --locked
