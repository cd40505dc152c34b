#!/usr/bin/env bash
# Builds fabric-session (release) and copies it into this plugin's bin/, where the plugin's
# hooks run it as ${CLAUDE_PLUGIN_ROOT}/bin/fabric-session. Run it before `claude plugin
# install`, and again after every change to the crate. bin/ is git-ignored.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
workspace=$(cd "$here/../.." && pwd)

cargo build --release -p fabric-session --manifest-path "$workspace/Cargo.toml"

target_dir=${CARGO_TARGET_DIR:-$workspace/target}
name=fabric-session
if [ -f "$target_dir/release/$name.exe" ]; then
  name=fabric-session.exe
fi
mkdir -p "$here/bin"
# Copy beside, then rename: a session running the old binary keeps running it.
cp "$target_dir/release/$name" "$here/bin/.$name.new"
chmod 0755 "$here/bin/.$name.new"
mv -f "$here/bin/.$name.new" "$here/bin/$name"
echo "Built $here/bin/$name"
