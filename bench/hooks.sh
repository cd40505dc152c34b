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

# Session-start without session-hooks/1 would skip the spool write; keep the feature on, but
# run it for a session id whose spool is re-used, so each run does the same work.
for event in session-start user-prompt-submit; do
  # Debian 12's hyperfine has no --input: each command reads the payload through the shell,
  # whose start-up hyperfine measures and subtracts, the same for all three.
  hyperfine --warmup 50 --runs "${RUNS:-500}" \
    --export-markdown "$out/$event.md" --export-json "$out/$event.json" \
    -n true "/bin/true < $payload" \
    -n "fabric-session $event" "$bin hook $event < $payload" \
    -n "python floor" "python3 $PWD/bench/python_floor.py < $payload"
done

python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
for event in ("session-start", "user-prompt-submit"):
    data = json.load(open(os.path.join(out, f"{event}.json")))["results"]
    med = {r["command"]: r["median"] for r in data}
    ours = med[f"fabric-session {event}"]
    print(f"{event}: median {ours*1e3:.3f} ms; /bin/true {med['true']*1e3:.3f} ms; "
          f"python floor {med['python floor']*1e3:.2f} ms; "
          f"ours/true = {ours/med['true']:.2f}x; python/ours = {med['python floor']/ours:.1f}x")
PY
