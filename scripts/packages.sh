# Sourced by run.sh, build-deb.sh and test.sh: installs the Debian packages named in its
# arguments that are not installed yet (apt-get update only when something is missing).

# What building the programs and the package needs, whichever of run.sh, build-deb.sh or
# test.sh runs first on a fresh machine.
BUILD_PACKAGES=(git pkg-config build-essential dpkg-dev libssl-dev python3
  libwebkit2gtk-4.1-dev libgtk-3-dev librsvg2-dev libayatana-appindicator3-dev libxdo-dev)

ensure_packages() {
  local missing=() p sudo=""
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ "${#missing[@]}" -gt 0 ] || return 0
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "== installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
