#!/usr/bin/env bash
# Times `fabric-session hook session-start` and `hook user-prompt-submit` side by side with
# /bin/true and with the Python floor (python_floor.py), in one hyperfine run each, in a
# temporary HOME where Fabric runs (the stand-in's hub.json), `fabric` is registered, a
# service descriptor exists and the session's spool holds a count.
#
# The binary is measured as it ships (static on Linux, scripts/build-hook-binary.sh) and as a
# plain dynamic release build, side by side. A third run starts sessions against a person's
# real-sized ~/.claude.json (400 projects with 20 history entries each, about 2.5 MB) next
# to the small one, in two HOMEs that differ only in that file.
#
# The state events (permission-request, post-tool-use: they run on every tool call) are timed
# in that real-sized HOME with the file rewritten just before every run (a Claude Code start
# rewrites it inside the config cache's 2 s window), each run moving the state for real
# (working -> needs you, needs you -> working), side by side with /bin/true.
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
dynamic=$PWD/target/release/fabric-session
bin=$(bash scripts/build-hook-binary.sh)
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
    -n "fabric-session $event (dynamic)" "sh -c 'exec $dynamic hook $event < $payload'" \
    -n "python floor" "sh -c 'exec python3 $PWD/bench/python_floor.py < $payload'"
done

# The same session start with a real-sized ~/.claude.json: a second HOME, identical but for
# that file. It is left to settle (a verdict on a file changed in the last two seconds is not
# cached) and read once before timing, as a person's would have been by their last session.
big=$work/big
mkdir -p "$big"
cp -a "$HOME/." "$big/"
python3 - "$big/.claude.json" <<'GEN'
import json, sys
projects = {
    f"/home/someone/src/project-{p:03}": {
        "allowedTools": [],
        "history": [{"display": f"please refactor module {h} of project {p}, keep the tests green and explain what changed in a short note " * 2,
                     "pastedContents": {}} for h in range(20)],
        "mcpServers": {}, "hasTrustDialogAccepted": True, "lastCost": 0.42,
        "exampleFiles": [f"src/module_{i}.rs" for i in range(20)],
    }
    for p in range(400)
}
doc = {"numStartups": 412, "projects": projects, "mcpServers": {"fabric": {"command": "fabric-mcp"}}}
open(sys.argv[1], "w").write(json.dumps(doc, indent=2))
GEN
# A third HOME like the second, where the verdict cannot be cached (its cache file is a
# folder): the walk of the whole file on every start, as when the file just changed.
nocache=$work/nocache
cp -a "$big/." "$nocache/"
mkdir -p "$nocache/.cache/fabric-companion/config-verdicts.json"
sleep 3
env_of() { echo "HOME=$1 XDG_CACHE_HOME=$1/.cache XDG_DATA_HOME=$1/.local/share"; }
env $(env_of "$big") "$bin" hook session-start < "$payload" > /dev/null
hyperfine -N --warmup 50 --runs "${RUNS:-500}" \
  --export-markdown "$out/session-start-real-config.md" --export-json "$out/session-start-real-config.json" \
  -n "small config" "env $(env_of "$HOME") sh -c 'exec $bin hook session-start < $payload'" \
  -n "real-sized config" "env $(env_of "$big") sh -c 'exec $bin hook session-start < $payload'" \
  -n "real-sized config, no cache" "env $(env_of "$nocache") sh -c 'exec $bin hook session-start < $payload'"

# The state events, in the real-sized HOME, its ~/.claude.json rewritten before every run.
# The session is recorded (its host: the hub's stand-in process, alive); before each run its
# state is put back so the event moves it.
bench_spool=$big/.cache/fabric-companion/sessions/bench-session
printf '{"host":"claude","project":"project","startedAt":"2026-12-02T10:00:00Z","hostPid":%s,"hostStartTicks":0}\n' "$hub_pid" > "$bench_spool/session.json"
printf '{"state":"working","since":"2026-12-02T10:00:00.000Z","turnStartedAt":"2026-12-02T10:00:00.000Z"}\n' > "$work/working.json"
printf '{"state":"needs-you","since":"2026-12-02T10:00:01.000Z","reason":"permission","tool":"Bash","turnStartedAt":"2026-12-02T10:00:00.000Z"}\n' > "$work/needs-you.json"
state_payload=$work/state-payload.json
python3 - "$state_payload" "$HOME/project" <<'GEN'
import json, sys
json.dump({"session_id": "bench-session", "transcript_path": "/tmp/t.jsonl", "cwd": sys.argv[2],
           "permission_mode": "default", "hook_event_name": "PermissionRequest", "tool_name": "Bash",
           "tool_input": {"command": "cargo test --workspace", "description": "Run the tests"},
           "tool_response": {"stdout": "ok " * 200, "stderr": "", "interrupted": False}},
          open(sys.argv[1], "w"))
GEN
# Before each run: rewrite ~/.claude.json as the host does (a new file renamed over it) and
# put the state back.
cat > "$work/prepare.sh" <<PREP
#!/bin/sh
cp "$big/.claude.json" "$big/.claude.json.tmp" && mv "$big/.claude.json.tmp" "$big/.claude.json"
cp "$work/\$1.json" "$bench_spool/state.json"
PREP
chmod +x "$work/prepare.sh"
for step in "permission-request working needs-you" "post-tool-use needs-you working"; do
  set -- $step
  hyperfine -N --warmup 20 --runs "${RUNS:-500}" --prepare "$work/prepare.sh $2" \
    --export-markdown "$out/$1.md" --export-json "$out/$1.json" \
    -n "true bare" "/bin/true" \
    -n "true" "env $(env_of "$big") sh -c 'exec /bin/true < $state_payload'" \
    -n "fabric-session $1" "env $(env_of "$big") sh -c 'exec $bin hook $1 < $state_payload'"
  grep -q "\"state\":\"$3\"" "$bench_spool/state.json" \
    || { echo "bench: $1 did not move the state to $3" >&2; exit 1; }
done

python3 - "$out" "$(stat -c %s "$big/.claude.json")" <<'PY'
import json, sys, os
out = sys.argv[1]
big_bytes = int(sys.argv[2])
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
    dynamic = med[f"fabric-session {event} (dynamic)"] - overhead
    print(f"{event}: as shipped (static) {ours*1e3:.3f} ms vs dynamic {dynamic*1e3:.3f} ms: dynamic/static = {dynamic/ours:.2f}x, dynamic/true = {dynamic/bare:.2f}x")
data = json.load(open(os.path.join(out, "session-start-real-config.json")))["results"]
med = {r["command"]: r["median"] for r in data}
small, big, nocache = med["small config"], med["real-sized config"], med["real-sized config, no cache"]
print(f"session-start, real-sized ~/.claude.json ({big_bytes/1e6:.1f} MB): {big*1e3:.3f} ms vs small {small*1e3:.3f} ms "
      f"= {big/small:.2f}x (without the cache, walking the file each time: {nocache*1e3:.3f} ms = {nocache/small:.2f}x)")
for event in ("permission-request", "post-tool-use"):
    data = json.load(open(os.path.join(out, f"{event}.json")))["results"]
    med = {r["command"]: r["median"] for r in data}
    bare, overhead = med["true bare"], med["true"] - med["true bare"]
    ours = med[f"fabric-session {event}"] - overhead
    print(f"{event} (state moved each run, real-sized ~/.claude.json rewritten just before): "
          f"fabric-session {ours*1e3:.3f} ms vs /bin/true {bare*1e3:.3f} ms = {ours/bare:.2f}x (bound: 2x)")
PY
