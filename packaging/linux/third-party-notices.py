#!/usr/bin/env python3
"""Writes the third-party notices of what the Linux package ships to stdout: every crate the
three programs link (normal dependencies for this host's platform, from `cargo metadata`),
with its licence expression and the licence and notice files its source holds, then the npm
packages the dashboard's page bundles (ui's `dependencies`). Reads local files (Cargo's
registry sources, ui/node_modules); `cargo metadata` first downloads any crate source of the
lock file's for this platform that the cargo home lacks (a fresh clone's `run.sh` builds only
the programs, not the test crates that share the workspace's resolve), and needs no network
when all are there. It fails, in one line, when cargo does or a crate has neither a licence
nor a file."""
import json
import os
import re
import subprocess
import sys

ROOTS = {"fabric-session", "fabric-tray", "fabric-companion"}
OURS = ROOTS | {"companion-platform", "companion-hosts", "companion-sessions", "companion-desktop", "fabric-client"}
FILE = re.compile(r"^(LICEN[CS]E|COPYING|NOTICE|UNLICENSE|COPYRIGHT)", re.I)

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
triple = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
triple = re.search(r"^host: (\S+)", triple, re.M).group(1)
metadata = subprocess.run(
    ["cargo", "metadata", "--format-version", "1", "--locked",
     "--filter-platform", triple, "--manifest-path", os.path.join(root, "Cargo.toml")],
    stdout=subprocess.PIPE, text=True)  # cargo's own lines (downloads, errors) on stderr
if metadata.returncode != 0:
    sys.exit(f"third-party-notices: cargo metadata failed (exit {metadata.returncode}; its error is above)")
meta = json.loads(metadata.stdout)
packages = {p["id"]: p for p in meta["packages"]}
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}

seen = set()
todo = [pid for pid, p in packages.items() if p["name"] in ROOTS and p["source"] is None]
while todo:
    pid = todo.pop()
    if pid in seen:
        continue
    seen.add(pid)
    for dep in nodes[pid]["deps"]:
        if any(kind["kind"] is None for kind in dep["dep_kinds"]):
            todo.append(dep["pkg"])


def files_of(folder):
    out = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if FILE.match(name) and os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                out.append((name, f.read().strip()))
    return out


third = sorted((packages[pid] for pid in seen if packages[pid]["name"] not in OURS),
               key=lambda p: (p["name"], p["version"]))
out = sys.stdout
out.write("Fabric Companion: third-party notices\n\n")
out.write(f"The programs in this package link {len(third)} crates (Rust) and bundle the npm "
          "packages listed last. Each is listed with its licence and the licence and notice "
          "files it ships.\n")
missing = []
for p in third:
    folder = os.path.dirname(p["manifest_path"])
    files = files_of(folder)
    licence = p.get("license") or ""
    if not licence and not files:
        missing.append(f"{p['name']} {p['version']}")
    out.write("\n" + "=" * 78 + "\n")
    out.write(f"{p['name']} {p['version']}  ({licence or 'see the files below'})\n")
    if p.get("repository"):
        out.write(f"{p['repository']}\n")
    for name, text in files:
        out.write(f"\n--- {name} ---\n{text}\n")

ui = os.path.join(root, "ui")
with open(os.path.join(ui, "package.json")) as f:
    npm = json.load(f).get("dependencies", {})
for name in sorted(npm):
    folder = os.path.join(ui, "node_modules", name)
    with open(os.path.join(folder, "package.json")) as f:
        info = json.load(f)
    out.write("\n" + "=" * 78 + "\n")
    out.write(f"{name} {info.get('version')} (npm, {info.get('license', 'see below')})\n")
    for fname, text in files_of(folder):
        out.write(f"\n--- {fname} ---\n{text}\n")
if missing:
    sys.exit("third-party-notices: no licence found for " + ", ".join(missing))
