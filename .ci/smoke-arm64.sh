#!/usr/bin/env bash
# The smoke test of a release tarball, run by the arm64 Node under qemu-user (or, with
# SMOKE_NODE=node, by this machine's Node on an x64 release):
#   1. the tarball unpacks and its files match SHA256SUMS
#   2. edge-agent --version and help
#   3. the native modules load for that architecture: serialport, node-hid (libusb, libudev),
#      unix-dgram; and the agent's sd_notify sends READY=1 as a datagram from its own process
#      (what NotifyAccess=main accepts) to a socket bound here by python3, which checks the
#      sender's pid from its SCM_CREDENTIALS, as systemd does
#   4. punch + queue status on a fresh data folder (sqlite3)
#   5. template extract of fixed synthetic images (onnxruntime): byte-identical to the templates
#      this machine extracts from the checkout
#   6. run --embedded until one punch is delivered, then Ctrl-C: exit 0. Its data folder is enrolled
#      beforehand by this machine's agent from the checkout (the same commit), in the background
#      while steps 2-5 run under emulation: the demo's twelve enrolments take about 100 s here and
#      over 5 minutes under qemu-user. The release then starts on a data folder another machine made,
#      as after a restore. SMOKE_SEED=0 enrols under emulation instead.
# Prints the seconds each step took.   usage: .ci/smoke-arm64.sh edge-agent-<v>-linux-arm64.tar.gz
set -euo pipefail
cd "$(dirname "$0")/.."
tarball="$(realpath "$1")"
# A fresh agent: nothing from this environment reaches its configuration (EDGE_AGENT_* are config keys).
for v in $(compgen -e | grep '^EDGE_AGENT_' || true); do unset "$v"; done
node_cmd="${SMOKE_NODE:-$(bash .ci/qemu-arm64.sh)}"
work="$(mktemp -d "${TMPDIR:-/tmp}/edge-agent-smoke-XXXXXX")"
embedded_pid=""
receiver=""
seed_pid=""
cleanup() {
  for pid in $embedded_pid $receiver $seed_pid; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

t=$(date +%s.%N)
step() { local now; now=$(date +%s.%N); printf 'smoke: %-58s %6.1f s\n' "$1" "$(echo "$now - $t" | bc)"; t=$now; }
fail() { echo "smoke: FAILED: $*" >&2; exit 1; }

tar -xzf "$tarball" -C "$work"
rel="$(echo "$work"/edge-agent-*)"
(cd "$rel" && sha256sum -c --quiet SHA256SUMS) || fail "files differ from SHA256SUMS"
arch="$(node -p "require('$rel/release.json').arch")"
[ "$("$node_cmd" -p process.arch)" = "$arch" ] || fail "the node given does not run $arch"
step "unpacked $(basename "$tarball"), SHA256SUMS ok ($arch)"

# Step 6's data folder, enrolled by this machine's agent while the next steps run (see the top).
if [ "${SMOKE_SEED:-1}" = 1 ]; then
  # node itself, not npx: Ctrl-C must reach the agent (npm exec does not pass it on)
  node --import tsx src/cli/main.ts run --embedded --data "$work/embedded" > "$work/seed.log" 2>&1 &
  seed_pid=$!
fi

ea() { "$node_cmd" "$rel/dist/src/cli/main.js" "$@"; }
want="$(node -p "require('$rel/package.json').version")"
[ "$(ea --version)" = "$want" ] || fail "--version is not $want"
step "edge-agent --version: $want"
ea help > "$work/help.txt"
grep -q 'rollback' "$work/help.txt" && grep -q 'queue' "$work/help.txt" || fail "help does not list the commands"
step "edge-agent help"

# (SerialPort.list() would spawn udevadm, which a CI container lacks: the binding itself is loaded.)
(cd "$rel" && "$node_cmd" --input-type=module -e "
  const { autoDetect } = await import('@serialport/bindings-cpp');
  if (typeof autoDetect().open !== 'function') throw new Error('no serial binding');
  const HID = (await import('node-hid')).default;
  HID.devices();
  if (typeof (await import('unix-dgram')).default.createSocket !== 'function') throw new Error('no unix-dgram');
  const { readFileSync } = await import('node:fs');
  const mapped = readFileSync('/proc/self/maps', 'utf8').split('\\n').map((l) => l.split(/\\s+/)[5] ?? '');
  console.log([...new Set(mapped.filter((p) => p.endsWith('.node')).map((p) => p.split('/').slice(-2).join('/')))].join(', '));
") > "$work/natives.txt" || fail "serialport, node-hid or unix-dgram does not load"
grep -q 'bindings-cpp' "$work/natives.txt" && grep -q 'HID' "$work/natives.txt" && grep -q 'unix_dgram' "$work/natives.txt" || fail "serialport, node-hid or unix-dgram is not mapped: $(cat "$work/natives.txt")"
step "serialport, node-hid and unix-dgram load: $(cat "$work/natives.txt")"

# sd_notify as the service sends it: a receiver bound here (python3, as systemd's notify socket:
# SO_PASSCRED), the release's own SdNotify sending READY=1 through the unix-dgram addon.
sock="$work/notify.sock"
python3 - "$sock" > "$work/notify.txt" 2> "$work/notify.err" <<'PY' &
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.bind(sys.argv[1])
s.settimeout(300)
msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(struct.calcsize('iII')))
pids = [struct.unpack('iII', d[:12])[0] for (level, kind, d) in anc if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS]
print(pids[0] if pids else 'none')
print(msg.decode())
PY
receiver=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "python3 did not bind $sock: $(cat "$work/notify.err")"
"$node_cmd" --input-type=module -e "
  const { SdNotify } = await import('$rel/dist/src/daemon/sd-notify.js');
  const notify = new SdNotify({ socket: '$sock' });
  if (notify.via !== 'socket') throw new Error('sd_notify goes through ' + notify.via + ', not the unix-dgram addon');
  if (!(await notify.ready('smoke ' + process.pid))) throw new Error('READY=1 was not sent');
  console.log(process.pid);
" > "$work/sender.txt" || fail "the agent's sd_notify did not send READY=1 through unix-dgram"
wait "$receiver" || fail "no datagram reached $sock: $(cat "$work/notify.err")"
receiver=""
sender="$(cat "$work/sender.txt")"
[ "$(sed -n 1p "$work/notify.txt")" = "$sender" ] || fail "the datagram came from pid $(sed -n 1p "$work/notify.txt"), not the agent's $sender (NotifyAccess=main would drop it)"
[ "$(sed -n '2,$p' "$work/notify.txt")" = "$(printf 'READY=1\nSTATUS=smoke %s' "$sender")" ] || fail "the datagram is not READY=1 + STATUS: $(cat "$work/notify.txt")"
step "sd_notify: READY=1 from the agent's own pid $sender over unix-dgram"

# Commands that record or read punches need a configuration (no silent ./data): every default.
printf '{}\n' > "$work/config.yaml"
common=(--config "$work/config.yaml" --data "$work/data" --terminal pi-smoke --api http://127.0.0.1:9)
ea punch --code 1042 --in --at '2026-03-02 07:58:00' --tz 60 "${common[@]}" >/dev/null
pending="$(ea queue status --json "${common[@]}" | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).pending')"
[ "$pending" = 1 ] || fail "queue status shows $pending pending, not 1"
step "punch + queue status on a fresh data folder: 1 pending"

mkdir "$work/img"
npx --no-install tsx .ci/smoke-images.ts "$work/img"
for m in finger:finger.pgm iris:eye.png; do
  modality="${m%%:*}"; image="$work/img/${m#*:}"
  npx --no-install tsx src/cli/main.ts template extract --modality "$modality" --image "$image" --out "$work/img/$modality.host" >/dev/null
  ea template extract --modality "$modality" --image "$image" --out "$work/img/$modality.$arch" >/dev/null
  cmp "$work/img/$modality.host" "$work/img/$modality.$arch" || fail "the $arch $modality template differs from this machine's"
done
step "template extract finger + iris: byte-identical to $(uname -m) ($(stat -c %s "$work/img/finger.$arch") + $(stat -c %s "$work/img/iris.$arch") B)"

if [ -n "$seed_pid" ]; then
  enrolments="$(npx --no-install tsx -e "import('./src/embedded/embedded.ts').then((m) => console.log(m.DEMO_EMPLOYEES.length * 2))")"
  done_count() { grep -cE '(enrolled|could not enrol) E[0-9]+' "$work/seed.log" || true; }
  seed_deadline=$(( $(date +%s) + ${SMOKE_SEED_TIMEOUT:-600} ))
  until [ "$(done_count)" -ge "$enrolments" ]; do
    kill -0 "$seed_pid" 2>/dev/null || { cat "$work/seed.log" >&2; fail "the agent enrolling the embedded data folder exited"; }
    [ "$(date +%s)" -lt "$seed_deadline" ] || { cat "$work/seed.log" >&2; fail "the embedded data folder was not enrolled in ${SMOKE_SEED_TIMEOUT:-600} s"; }
    sleep 1
  done
  kill -INT "$seed_pid"
  code=0; wait "$seed_pid" || code=$?
  seed_pid=""
  [ "$code" = 0 ] || { cat "$work/seed.log" >&2; fail "the agent enrolling the embedded data folder exited $code on Ctrl-C"; }
  ! grep -q 'could not enrol' "$work/seed.log" || fail "the embedded demo could not enrol everyone: $(grep 'could not enrol' "$work/seed.log")"
  step "embedded data folder enrolled by $(uname -m)'s agent: $enrolments enrolments"
fi

# Started directly, not through ea (a function runs in a subshell): $! is then the agent's own
# process (the wrapper execs qemu, which passes signals on), so Ctrl-C reaches it. With the node
# flags the unit gives the daemon (DAEMON_NODE_FLAGS, read from the release): this node must take them.
daemon_flags="$(node --input-type=module -e "import('$rel/dist/src/setup/service-files/daemon-command.js').then((m) => console.log(m.DAEMON_NODE_FLAGS.join(' ')))")"
[ -n "$daemon_flags" ] || fail "could not read DAEMON_NODE_FLAGS from the release"
# shellcheck disable=SC2086 # the flags are words
"$node_cmd" $daemon_flags "$rel/dist/src/cli/main.js" run --embedded --data "$work/embedded" > "$work/embedded.log" 2>&1 &
embedded_pid=$!
deadline=$(( $(date +%s) + ${SMOKE_EMBEDDED_TIMEOUT:-900} ))
until grep -qE 'delivered: [0-9]+ punch\(es\) to api' "$work/embedded.log"; do
  kill -0 "$embedded_pid" 2>/dev/null || { cat "$work/embedded.log" >&2; fail "run --embedded exited before delivering"; }
  [ "$(date +%s)" -lt "$deadline" ] || { cat "$work/embedded.log" >&2; fail "run --embedded delivered nothing in ${SMOKE_EMBEDDED_TIMEOUT:-900} s"; }
  sleep 2
done
step "run --embedded ($daemon_flags): $(grep -m1 -oE 'delivered: [0-9]+ punch\(es\) to api' "$work/embedded.log")"
kill -INT "$embedded_pid"
code=0; wait "$embedded_pid" || code=$?
embedded_pid=""
[ "$code" = 0 ] || { cat "$work/embedded.log" >&2; fail "run --embedded exited $code on Ctrl-C"; }
step "run --embedded stopped on Ctrl-C, exit 0"
echo "smoke: passed ($arch)"
