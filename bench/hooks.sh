#!/usr/bin/env bash
# Times `fabric-session hook session-start` and `hook user-prompt-submit` side by side with
# /bin/true and with the Python floor (python_floor.py), in one hyperfine run each, in a
# temporary HOME where Fabric runs (the stand-in's hub.json), `fabric` is registered, a
# service descriptor exists and the session's spool holds a count.
#
# Usage: bench/hooks.sh            (builds release binaries first; needs hyperfine)
# Results: bench/results/*.md and *.json, and a ratio summary on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq hyperfine
}
cargo build --release -q -p fabric-session -p fabric-fake
mkdir -p target/bench
rustc -O -C strip=symbols -o target/bench/empty-main bench/empty_main.rs
bin=$PWD/target/release/fabric-session
fake=$PWD/target/release/fabric-fake
out=$PWD/bench/results
mkdir -p "$out"

work=$(mktemp -d)
trap 'kill "$hub_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
export HOME=$work/home XDG_CACHE_HOME=$work/home/.cache XDG_DATA_HOME=$work/home/.local/share
mkdir -p "$HOME/project"
echo '{"numStartups":1,"mcpServers":{"fabric":{"command":"fabric-mcp"}}}' > "$HOME/.claude.json"
sleep 100000 & hub_pid=$!
"$fake" hub --fabric-dir "$XDG_DATA_HOME/passioncode-fabric" --pid "$hub_pid" --feature session-hooks/1 >/dev/null
"$fake" service --dir "$XDG_DATA_HOME/passioncode-fabric/services" --id analytics --instance main >/dev/null
spool=$XDG_CACHE_HOME/fabric-companion/sessions/bench-session
mkdir -p "$spool"
echo '{"unread":3,"state":"ready","observedAt":"2026-12-02T10:00:00Z"}' > "$spool/board.json"
echo 3 > "$spool/board.shown"
payload=$work/payload.json
printf '{"session_id":"bench-session","cwd":"%s","hook_event_name":"SessionStart","source":"startup","prompt":"hello"}' "$HOME/project" > "$payload"

# Debian 12's hyperfine (1.15) has no --input, and its shell-start correction is too coarse
# for sub-millisecond commands. So every command runs without a shell (-N) as
# `sh -c 'exec <cmd> < payload'`: the same sh start-up and redirect for all, measured in the
# same run. An empty Rust `main` shows the floor of any Rust binary. `/bin/true` bare gives the cost of starting a tiny binary; the sh overhead is
# (sh->true) - (true bare), and a command's own cost is (sh->cmd) - that overhead.
for event in session-start user-prompt-submit; do
  hyperfine -N --warmup 50 --runs "${RUNS:-500}" \
    --export-markdown "$out/$event.md" --export-json "$out/$event.json" \
    -n "true bare" "/bin/true" \
    -n "true" "sh -c 'exec /bin/true < $payload'" \
    -n "rust floor" "sh -c 'exec $PWD/target/bench/empty-main < $payload'" \
    -n "fabric-session $event" "sh -c 'exec $bin hook $event < $payload'" \
    -n "python floor" "sh -c 'exec python3 $PWD/bench/python_floor.py < $payload'"
done

python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
for event in ("session-start", "user-prompt-submit"):
    data = json.load(open(os.path.join(out, f"{event}.json")))["results"]
    med = {r["command"]: r["median"] for r in data}
    bare, sh_true = med["true bare"], med["true"]
    overhead = sh_true - bare
    ours = med[f"fabric-session {event}"] - overhead
    python = med["python floor"] - overhead
    rust = med["rust floor"] - overhead
    print(f"{event}: medians (own cost, sh overhead {overhead*1e3:.3f} ms removed): "
          f"/bin/true {bare*1e3:.3f} ms, empty Rust main {rust*1e3:.3f} ms, fabric-session {ours*1e3:.3f} ms, python floor {python*1e3:.2f} ms; "
          f"fabric-session/true = {ours/bare:.2f}x, python/fabric-session = {python/ours:.1f}x")
PY
