#!/usr/bin/env bash
# Puts Mesa 25's lavapipe (Debian bookworm-backports, mesa-vulkan-drivers 25.0.x) into
# web/.mesa for the WebGPU tests, without installing it: Dawn (npm webgpu) refuses
# bookworm's Mesa 22 lavapipe, and the system's Mesa stays what the C++ tests use. apt reads
# a private sources list and package lists under /tmp, so nothing on the system changes;
# the package is unpacked with dpkg -x and web/.mesa/lvp_icd.json names its driver by
# absolute path. The WebGPU tests point VK_DRIVER_FILES at that file (web/run-tests.sh).
# Needs the runtime libraries the driver links (libLLVM-15 etc.), which the system's
# mesa-vulkan-drivers already brings.
set -euo pipefail
web=$(cd "$(dirname "$0")/.." && pwd)
# The backports' current version (25.0.7-2~bpo12+1 when this was written); MESA_VERSION pins one.
package=mesa-vulkan-drivers${MESA_VERSION:+=$MESA_VERSION}
[[ -n ${MESA_VERSION:-} ]] || package=mesa-vulkan-drivers/bookworm-backports
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/sources" "$work/lists/partial"
cat >"$work/sources/backports.sources" <<SOURCES
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
o=(-oDir::Etc::SourceList=/dev/null "-oDir::Etc::SourceParts=$work/sources"
  "-oDir::State::Lists=$work/lists" -oAPT::Architecture=amd64 -oAPT::Architectures=amd64
  -oAPT::Sandbox::User=root)
apt-get "${o[@]}" update >/dev/null
(cd "$work" && apt-get "${o[@]}" download "$package" >/dev/null)
rm -rf "$web/.mesa"
mkdir -p "$web/.mesa"
dpkg -x "$work"/mesa-vulkan-drivers_*.deb "$web/.mesa"
sed "s|\"library_path\": *\"[^\"]*\"|\"library_path\": \"$web/.mesa/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so\"|" \
  "$web/.mesa/usr/share/vulkan/icd.d/lvp_icd.json" >"$web/.mesa/lvp_icd.json"
echo "lavapipe $(dpkg-deb -f "$work"/mesa-vulkan-drivers_*.deb Version) in $web/.mesa"
