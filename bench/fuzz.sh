#!/usr/bin/env bash
# Runs every cargo-fuzz target in hookbin/fuzz for a stated time each (default 60 s; set
# FUZZ_SECS), on the nightly toolchain (`rustup toolchain install nightly`, `cargo install
# cargo-fuzz`). Not part of the test suite: a crash it finds is saved under
# hookbin/fuzz/artifacts/<target>/ and must become a regression test on stable.
#
#   bash bench/fuzz.sh                 # all targets, 60 s each
#   FUZZ_SECS=600 bash bench/fuzz.sh json_scan config_editors
set -euo pipefail
cd "$(dirname "$0")/../hookbin/fuzz"
secs="${FUZZ_SECS:-60}"
# Our code is safe Rust: the fuzzers hunt panics and broken invariants, so no sanitizer by
# default (smaller, faster builds); FUZZ_SANITIZER=address for the unsafe corners.
sanitizer="${FUZZ_SANITIZER:-none}"
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "bench/fuzz.sh: needs the nightly toolchain and cargo-fuzz (cargo install cargo-fuzz)" >&2
  exit 2
fi
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
failed=0
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target"
  echo "== $target (${secs} s)"
  if CARGO_PROFILE_RELEASE_DEBUG=0 nice cargo +nightly fuzz run --sanitizer "$sanitizer" "$target" "corpus/$target" -- \
      -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 2>"fuzz-$target.log"; then
    grep -E '^(#[0-9]+.*DONE|Done [0-9]+ runs)' "fuzz-$target.log" | tail -1 || true
  else
    failed=1
    echo "   CRASH: see hookbin/fuzz/artifacts/$target/ and hookbin/fuzz/fuzz-$target.log"
    grep -E 'panicked|ERROR' "fuzz-$target.log" | head -3
  fi
done
exit "$failed"
