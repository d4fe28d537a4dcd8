#!/usr/bin/env bash
# Installs a built edge-agent .deb into a scratch root and checks what it did, without touching
# this machine: dpkg --root=DIR with
#   --force-script-chrootless  the maintainer scripts run here, with $DPKG_ROOT=DIR (they prefix
#                              every path with it; a chroot would need a whole system in DIR)
#   --force-depends            DIR has no nodejs, libusb-1.0-0, libudev1 (the Pi has them)
#   --force-not-root           for runs as an ordinary user (as root it changes nothing)
# and, for an arm64 package on an x86 machine, --add-architecture arm64 in that root.
# Then: the unit, the udev rules (a conffile), the user, the folders and the release links are
# there; NotifyAccess: postinst checks the release's unix-dgram addon with the root's /usr/bin/node,
# here this machine's node (no drop-in for a package of this machine; for an arm64 package on x86
# the addon does not load, so the NotifyAccess=all drop-in), then, with DEB_NODE=<a node of the
# package's architecture> (the arm64 node under qemu), with that node as the root's /usr/bin/node
# (the addon loads: the drop-in goes); `systemd-analyze verify` passes on the installed unit; and
# removing then purging keeps the config and the data (no purge-data flag) and removes the drop-in.
#   usage: [DEB_NODE=node] .ci/deb-check.sh edge-agent_<v>_<arch>.deb
set -euo pipefail
deb="$(realpath "$1")"
root="$(mktemp -d "${TMPDIR:-/tmp}/edge-agent-debroot-XXXXXX")"
trap 'rm -rf "$root"' EXIT
fail() { echo "deb-check: FAILED: $*" >&2; exit 1; }

# A scratch root: dpkg's database and the account files, nothing else.
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/etc"
: > "$root/var/lib/dpkg/status"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$root/etc/passwd"
printf 'root:x:0:\ndialout:x:20:\n' > "$root/etc/group"
printf 'root:*:19000:0:99999:7:::\n' > "$root/etc/shadow"
printf 'root:*::\ndialout:*::\n' > "$root/etc/gshadow"
chmod 600 "$root/etc/shadow" "$root/etc/gshadow"
dpkg_root=(dpkg --root="$root" --force-not-root --force-script-chrootless --force-depends --log=/dev/null)

version="$(dpkg-deb -f "$deb" Version)"
arch="$(dpkg-deb -f "$deb" Architecture)"
# An arm64 package on this x86 machine: the scratch root's dpkg is told it is a foreign architecture.
[ "$arch" = "$(dpkg --print-architecture)" ] || "${dpkg_root[@]}" --add-architecture "$arch"
echo "deb-check: $(basename "$deb"): $(dpkg-deb -f "$deb" Depends)"
"${dpkg_root[@]}" -i "$deb"

unit="$root/lib/systemd/system/edge-agent.service"
[ -f "$unit" ] || fail "no unit at /lib/systemd/system/edge-agent.service"
grep -qx 'ExecStart=/usr/bin/node --max-semi-space-size=4 --heap-growing-percent=20 /opt/edge-agent/current/dist/src/cli/main.js run' "$unit" || fail "the unit does not run /opt/edge-agent/current"
[ -f "$root/etc/udev/rules.d/99-edge-agent.rules" ] || fail "no udev rules"
grep -qx '/etc/udev/rules.d/99-edge-agent.rules' "$root/var/lib/dpkg/info/edge-agent.conffiles" || fail "the rules are not a conffile"
grep -q '^edge-agent:x:[0-9]*:[0-9]*::/var/lib/edge-agent:/usr/sbin/nologin$' "$root/etc/passwd" || fail "no system user edge-agent"
[ "$(stat -c %a "$root/var/lib/edge-agent")" = 700 ] || fail "/var/lib/edge-agent is not 0700"
[ "$(stat -c %u "$root/var/lib/edge-agent")" = "$(awk -F: '$1=="edge-agent"{print $3}' "$root/etc/passwd")" ] || fail "/var/lib/edge-agent is not the user's"
[ -d "$root/etc/edge-agent" ] || fail "no /etc/edge-agent"
[ "$(readlink "$root/opt/edge-agent/current")" = "releases/$version" ] || fail "current does not point at releases/$version"
grep -q '^exec /usr/bin/node /opt/edge-agent/current/dist/src/cli/main.js "\$@"$' "$root/usr/bin/edge-agent" || fail "no /usr/bin/edge-agent running the current release"
(cd "$root/opt/edge-agent/current" && sha256sum -c --quiet SHA256SUMS) || fail "installed files differ from SHA256SUMS"
echo "deb-check: installed: unit, rules (conffile), user edge-agent, /etc/edge-agent, /var/lib/edge-agent (0700), current -> releases/$version"

dropin="$root/etc/systemd/system/edge-agent.service.d/notify-access.conf"
if [ "$arch" = "$(dpkg --print-architecture)" ]; then
  [ ! -e "$dropin" ] || fail "the addon should load with this machine's node, yet postinst wrote a drop-in: $(cat "$dropin")"
  echo "deb-check: the unix-dgram addon loads with this machine's node: NotifyAccess=main, no drop-in"
else
  grep -qx 'NotifyAccess=all' "$dropin" 2>/dev/null || fail "an $arch addon cannot load with this machine's node, yet there is no NotifyAccess=all drop-in"
  echo "deb-check: the $arch addon does not load with this machine's node: the drop-in says NotifyAccess=all"
fi
if [ -n "${DEB_NODE:-}" ]; then
  mkdir -p "$root/usr/bin"
  ln -sfn "$(realpath "$DEB_NODE")" "$root/usr/bin/node"
  out="$("${dpkg_root[@]}" -i "$deb" 2>&1)" || fail "reinstalling with $DEB_NODE as /usr/bin/node: $out"
  echo "$out" | grep -q 'the unix-dgram addon loads with /usr/bin/node' || fail "the addon does not load with $DEB_NODE: $out"
  [ ! -e "$dropin" ] || fail "the addon loads with $DEB_NODE, yet the drop-in stays"
  rm "$root/usr/bin/node"
  echo "deb-check: with $("$DEB_NODE" -p 'process.arch + " node " + process.version') as /usr/bin/node the addon loads: the drop-in is gone"
fi

# verify checks the unit as systemd would load it; ExecStart's binary must exist: /usr/bin/node here.
out="$(systemd-analyze verify "$unit" 2>&1)" || fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify: $out"
echo "deb-check: systemd-analyze verify passes on the installed unit"

echo 'terminal: {id: gate-1}' > "$root/etc/edge-agent/config.yaml"
echo 'punches' > "$root/var/lib/edge-agent/agent.db"
"${dpkg_root[@]}" -r edge-agent
[ ! -e "$root/opt/edge-agent" ] && [ -f "$root/etc/edge-agent/config.yaml" ] && [ -f "$root/var/lib/edge-agent/agent.db" ] || fail "remove did not keep the config and data, or left the program"
[ ! -e "$dropin" ] || fail "remove left the NotifyAccess drop-in"
"${dpkg_root[@]}" --purge edge-agent
[ -f "$root/etc/edge-agent/config.yaml" ] && [ -f "$root/var/lib/edge-agent/agent.db" ] || fail "purge without /etc/edge-agent/purge-data removed the config or the data"
echo "deb-check: remove and purge keep /etc/edge-agent and /var/lib/edge-agent (no purge-data flag)"
echo "deb-check: passed"
