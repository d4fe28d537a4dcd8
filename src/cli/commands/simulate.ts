/**
 * `edge-agent simulate r30x|gt521|badge --link PATH [--baud N]`: serves a byte-exact module (or
 * serial badge reader) simulator on one end of a socat pty pair and prints `device: PATH` for the
 * other end, which any driver (or `edge-agent devices --port PATH`, or `edge-agent run --scanner
 * badge-serial:PATH`) opens like a real serial port. `edge-agent simulate iris` and
 * `simulate badge-hid` serve in-process. Control commands arrive on stdin, one per line (see
 * CONTROL).
 *
 * Tested in test/integration/drivers-devices-cli.test.ts (simulate --link on a pty, fault switches
 * by command) and test/integration/simulate-badge-cli.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { action, defineCommand, intFlag, usageError, withVerbs } from '../command.js';
import { AgentError, describeError } from '../../core/errors.js';
import type { Scanner, ScannerFamily } from '../../../drivers/scanner.js';
import type { SocatPair } from '../../../drivers/transport/socat-pair.js';
import type { SimulatorControl } from '../../../drivers/simulated.js';

type Values = { link?: string; baud?: string; model?: string; capacity?: string; enroll?: string; format?: string };

const CONTROL = `Control commands on stdin, one per line (each answered by "ok: ..." or "error: ..."):
  finger ID              put virtual finger ID (a number, the synthetic finger seed) on the sensor
  eye ID                 show virtual eye ID to an iris camera
  card N                 hold card number N to a badge reader (0..4294967295; wiegand26: < 16777216)
  lift                   take the finger (or eye, or card) away
  enroll SLOT ID         store virtual finger ID in module slot SLOT
  capture                (iris) capture through the in-process driver; prints size and quality
  fault NAME on|off|N    switch a fault: bad-checksum, dropped-bytes (on, or for the next N packets),
                         stall, unplug (on: socat stops and the port vanishes; off: plugged back
                         in at the same path, library kept), no-finger, low-quality; badge
                         readers: garbage (line noise before the next N cards), bad-checksum
                         (formats with a checksum or parity), dropped-bytes, stall, unplug
  quit                   stop the simulator
Stop it with Ctrl-C (SIGINT) or SIGTERM as well.`;

const SERIAL_FAMILIES: Record<string, ScannerFamily> = { r30x: 'r30x', gt521: 'gt521', badge: 'badge-serial' };
const DEFAULT_BAUD: Record<string, number> = { r30x: 57600, gt521: 9600, badge: 9600 };
const FORMAT_HELP =
  'the line format: em4100-dec (default: 10 digits, CR LF), em4100-hex (STX, 10 hex digits, XOR checksum, ETX; repeated every 50 ms while the card stays), wiegand26 or wiegand34 (a bit line with parity)';

/**
 * Reads the host side's line speed with stty (a few ms). Cached while the host keeps talking:
 * read again only after 100 ms without a call (a new session: a probe, a reopen) or when asked.
 */
function hostBaudReader(path: string): (fresh?: boolean) => number | null {
  let lastCall = -Infinity;
  let cached: number | null = null;
  return (fresh = false) => {
    const now = performance.now();
    if (fresh || now - lastCall > 100) {
      try {
        const out = execFileSync('stty', ['-F', path, 'speed'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 1000 });
        const n = Number(out.trim());
        cached = Number.isFinite(n) ? n : null;
      } catch {
        cached = null;
      }
    }
    lastCall = now;
    return cached;
  };
}

export default function register(program: Command): Command {
  const simulate = defineCommand(program, {
    name: 'simulate',
    summary: 'serve a simulated scanner module or badge reader on a pseudo-terminal (r30x, gt521, badge) or in-process (iris, badge-hid)',
    audience: 'technician',
    details: `The module answers the same bytes as the hardware, paced at the baud rate. It prints
"device: PATH" once the port is ready; open that path like a serial port
(edge-agent devices --port PATH). "edge-agent simulate <verb> --help" lists the control commands.`,
  });
  withVerbs(simulate);
  const serial = (cmd: Command, family: string, example: string) =>
    cmd
      .requiredOption('--link <path>', `where the serial port appears (a symlink to the pty), e.g. ${example}`)
      .option('--baud <n>', `the module's line speed (default ${DEFAULT_BAUD[family]})`);
  const enroll = (cmd: Command) =>
    cmd.option('--enroll <slot:id,...>', 'store virtual finger ID in slot SLOT at start (comma-separated list)');

  const r30x = defineCommand(simulate, {
    name: 'r30x',
    summary: 'an R30x fingerprint module (R503, R307, R305, AS608, ZFM-20) on a pseudo-terminal',
    details: CONTROL,
  });
  serial(r30x, 'r30x', '/tmp/ttyR30X')
    .option('--model <name>', 'R503 (default), R307, R305, AS608 or ZFM-20')
    .option('--capacity <n>', "module library size (default: the model's)");
  action<Values>(enroll(r30x), serveSimulator('r30x'));

  const gt521 = defineCommand(simulate, { name: 'gt521', summary: 'a GT-521 fingerprint module on a pseudo-terminal', details: CONTROL });
  serial(gt521, 'gt521', '/tmp/ttyGT').option('--model <name>', 'GT-521F52 (default, 3000 templates) or GT-521F32 (200)');
  action<Values>(enroll(gt521), serveSimulator('gt521'));

  const iris = defineCommand(simulate, { name: 'iris', summary: 'an iris camera (USB HID), served in-process', details: CONTROL })
    .alias('iris-hid')
    .option('--model <name>', 'the model the camera reports (default SIM-IRIS-1)');
  action<Values>(iris, serveSimulator('iris'));

  const badge = defineCommand(simulate, {
    name: 'badge',
    summary: 'a serial badge reader (EM4100 125 kHz, Wiegand-to-UART) on a pseudo-terminal',
    details: CONTROL,
  }).alias('badge-serial');
  serial(badge, 'badge', '/tmp/ttyBADGE').option('--format <format>', FORMAT_HELP);
  action<Values>(badge, serveSimulator('badge'));

  const badgeHid = defineCommand(simulate, {
    name: 'badge-hid',
    summary: 'a USB keyboard-wedge badge reader (HID), served in-process; prints each card the in-process reader reads',
    details: CONTROL,
  }).option('--format <format>', 'the line format it types: em4100-dec (default), wiegand26 or wiegand34');
  action<Values>(badgeHid, serveSimulator('badge-hid'));
  return simulate;
}

/** The action of `simulate <kind>`: serves until "quit", SIGINT or SIGTERM. */
function serveSimulator(kind: string): (values: Values) => Promise<number> {
  return async (values) => {
    const { SerialTransport } = await import('../../../drivers/transport/serial-transport.js');
    const { createSocatPair } = await import('../../../drivers/transport/socat-pair.js');
    const { attachSimulator, createSimulatedScanner } = await import('../../../drivers/simulated.js');
    const { syntheticImages } = await import('../../synthetic/simulator-sources.js');
    const capacity = intFlag('capacity', values.capacity);
    // Checked before a pty or socat exists, so a typo leaves nothing behind.
    const enrollments = (values.enroll ?? '')
      .split(',')
      .filter(Boolean)
      .map((item): [number, number] => {
        const [slot, id] = item.split(':').map(Number);
        if (!Number.isInteger(slot) || !Number.isInteger(id))
          throw usageError(`simulate ${kind}`, `--enroll takes SLOT:ID pairs, got "${item}"`, { flag: 'enroll', value: item });
        return [slot!, id!];
      });
    const options = {
      images: syntheticImages,
      ...(values.model ? { model: values.model } : {}),
      ...(capacity !== undefined ? { capacity } : {}),
      ...(values.format ? { format: values.format } : {}),
    };
    let simulator: SimulatorControl;
    let pair: SocatPair | undefined;
    let inProcess: Scanner | undefined;
    let serialBaud = 0;
    let stopping = false;
    /** "device: ..." (and a note for stderr): printed once a signal stops the simulator cleanly. */
    let ready: { device: string; note?: string };

    if (kind === 'iris' || kind === 'iris-hid') {
      const sim = await createSimulatedScanner('iris-hid', options);
      const info = await sim.scanner.open();
      simulator = sim.simulator;
      inProcess = sim.scanner;
      ready = { device: `in-process ${info.model} (${info.family})` };
    } else if (kind === 'badge-hid') {
      const sim = await createSimulatedScanner('badge-hid', { ...options, pacing: true });
      const info = await sim.scanner.open();
      simulator = sim.simulator;
      inProcess = sim.scanner;
      ready = { device: `in-process ${info.model} (${info.family})` };
      void printReads(sim.scanner);
    } else {
      const family = SERIAL_FAMILIES[kind]!;
      const baud = intFlag('baud', values.baud, DEFAULT_BAUD[kind])!;
      serialBaud = baud;
      pair = await createSocatPair(values.link!);
      const device = new SerialTransport({ path: pair.deviceLink, baud });
      try {
        await device.open();
        simulator = await attachSimulator(family, device, { ...options, baud, pacing: true, hostBaud: hostBaudReader(pair.hostLink) });
      } catch (err) {
        // A bad --model or --baud: leave no pty and no socat behind.
        await device.close();
        await pair.close();
        throw err;
      }
      ready = {
        device: pair.hostLink,
        note: `simulating ${kind} at ${baud} baud; control commands on stdin ("edge-agent simulate ${kind} --help")`,
      };
    }
    for (const [slot, id] of enrollments) {
      if (!simulator.enroll) throw new AgentError('CLI_USAGE', `this simulator keeps no module slots`, {});
      simulator.enroll(slot, id);
    }

    const code = await new Promise<number>((resolve) => {
      const rl = createInterface({ input: process.stdin });
      const stop = async (code: number) => {
        if (stopping) return;
        stopping = true;
        rl.close();
        process.stdin.destroy();
        await inProcess?.close().catch(() => undefined);
        await simulator.close().catch(() => undefined);
        // A socat that will not go must not keep the simulator from ending: say so, exit 1.
        const closed = await (pair?.close() ?? Promise.resolve()).then(
          () => true,
          (err: unknown) => {
            process.stderr.write(
              `edge-agent simulate: could not close the pseudo-terminal pair: ${describeError(err)}\n  hint: look for a socat left running (pgrep -a socat) and stop it\n`,
            );
            return false;
          },
        );
        resolve(closed ? code : 1);
      };
      // Kept to the end: a signal while a stop is under way ("quit", then systemd's stop or a
      // second Ctrl-C) is the same clean stop, not a kill.
      process.on('SIGINT', () => void stop(0));
      process.on('SIGTERM', () => void stop(0));
      // Only now: whoever waits for this line may stop the simulator at once, and before the
      // handlers above a SIGTERM killed it by the signal (with a socat left behind).
      process.stdout.write(`device: ${ready.device}\n`);
      if (ready.note) process.stderr.write(`${ready.note}\n`);
      rl.on('line', (line) => {
        const words = line.trim().split(/\s+/).filter(Boolean);
        if (words.length === 0) return;
        try {
          if (words[0] === 'capture') {
            if (!inProcess)
              throw new AgentError(
                'CLI_USAGE',
                'capture works for the in-process iris simulator; a serial module is captured through its port',
              );
            void inProcess.captureImage().then(
              (img) => process.stdout.write(`ok: capture ${img.width}x${img.height} quality ${img.quality ?? 'n/a'}\n`),
              (err: unknown) => process.stdout.write(`error: ${describeError(err).replace(/\n/g, ' ')}\n`),
            );
            return;
          }
          const reply = control(words);
          if (reply === 'quit') {
            process.stdout.write('ok: quit\n');
            void stop(0);
            return;
          }
          if (words[0] === 'fault' && words[1] === 'unplug' && pair) {
            void replug(words[2] !== 'off').then(
              () => process.stdout.write(`ok: ${words.join(' ')}\n`),
              (err: unknown) => process.stdout.write(`error: ${describeError(err).replace(/\n/g, ' ')}\n`),
            );
            return;
          }
          process.stdout.write(`ok: ${words.join(' ')}\n`);
        } catch (err) {
          process.stdout.write(`error: ${describeError(err).replace(/\n/g, ' ')}\n`);
        }
      });
      // stdin closing does not stop the simulator (it may run in the background); signals do.
    });
    // Ended here, with the handlers above still in place. Left to end by itself, Node takes them
    // down while it tears down (5-15 ms after "quit", more on a busy board), and a SIGTERM in that
    // gap killed the simulator by the signal (no exit code) instead of a clean exit 0. Everything
    // is closed by now and stdout (a pipe or terminal) is written synchronously on Linux.
    process.exit(code);

    /** The in-process keyboard-wedge reader's reads, as they come (a simulator's own cards: printing them is fine). */
    async function printReads(reader: Scanner): Promise<void> {
      while (!stopping) {
        if (!(await reader.waitForPresence({ timeoutMs: 500 }))) continue;
        try {
          const read = await reader.readCredential!();
          process.stdout.write(`read: ${read.format} card ${read.credential}\n`);
        } catch (err) {
          process.stdout.write(`read failed: ${describeError(err).replace(/\n/g, ' ')}\n`);
        }
      }
    }

    /** Unplug: socat stops, the port vanishes. Plug back: a new pty at the same path, same module. */
    async function replug(unplug: boolean): Promise<void> {
      if (unplug) {
        await pair!.close();
        return;
      }
      if (!simulator.attach) throw new AgentError('CLI_USAGE', 'this simulator cannot be plugged back in');
      const fresh = await createSocatPair(values.link!);
      pair = fresh;
      const device = new SerialTransport({ path: fresh.deviceLink, baud: serialBaud });
      await device.open();
      await simulator.attach(device);
    }

    function control(words: string[]): string | undefined {
      const [cmd, a, b] = words;
      const num = (v: string | undefined, what: string) => {
        const n = Number(v);
        if (v === undefined || !Number.isInteger(n) || n < 0) throw new AgentError('CLI_USAGE', `${cmd} needs ${what} (a whole number)`);
        return n;
      };
      switch (cmd) {
        case 'finger':
        case 'eye':
        case 'card':
        case 'present':
          simulator.present(num(a, 'an id'));
          return;
        case 'lift':
          simulator.lift();
          return;
        case 'enroll':
          if (!simulator.enroll) throw new AgentError('CLI_USAGE', 'this simulator keeps no module slots');
          simulator.enroll(num(a, 'a slot'), num(b, 'a finger id'));
          return;
        case 'fault': {
          if (!a || !b) throw new AgentError('CLI_USAGE', 'fault NAME on|off|N');
          const value = b === 'on' ? true : b === 'off' ? false : num(b, 'on, off or a count');
          simulator.setFault(a, value);
          // An in-process HID device comes back on the bus (the reader reopens it by itself).
          if (a === 'unplug' && value === false && !pair && 'replug' in simulator) (simulator as { replug(): void }).replug();
          return;
        }
        case 'quit':
        case 'exit':
          return 'quit';
        default:
          throw new AgentError('CLI_USAGE', `unknown control command "${cmd}"; use finger, eye, card, lift, enroll, fault or quit`);
      }
    }
  };
}
