/**
 * `edge-agent simulate r30x|gt521 --link PATH [--baud N]`: serves a byte-exact module simulator on
 * one end of a socat pty pair and prints `device: PATH` for the other end, which any driver (or
 * `edge-agent devices --port PATH`) opens like a real serial port. `edge-agent simulate iris`
 * serves in-process. Control commands arrive on stdin, one per line (see USAGE).
 */
import { execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Command } from '../command.js';
import { intFlag, parseCommandArgs } from '../args.js';
import { AgentError, describeError } from '../../core/errors.js';
import type { Scanner, ScannerFamily } from '../../../drivers/scanner.js';
import { SerialTransport } from '../../../drivers/transport/serial-transport.js';
import { createSocatPair, type SocatPair } from '../../../drivers/transport/socat-pair.js';
import { attachSimulator, createSimulatedScanner, type SimulatorControl } from '../../../drivers/simulated.js';
import { syntheticImages } from '../../synthetic/simulator-sources.js';

const USAGE = `usage: edge-agent simulate r30x|gt521 --link PATH [--baud N] [--model NAME] [--capacity N] [--enroll SLOT:ID,...]
       edge-agent simulate iris

Serves a simulated scanner module on a pseudo-terminal. The module answers the same bytes as the
hardware, paced at the baud rate. It prints "device: PATH" once the port is ready; open that
path like a serial port (edge-agent devices --port PATH).

options:
  --link PATH        where the serial port appears (a symlink to the pty), e.g. /tmp/ttyR30X
  --baud N           the module's line speed (r30x default 57600, gt521 default 9600)
  --model NAME       r30x: R503 (default), R307, R305, AS608, ZFM-20; gt521: GT-521F32, GT-521F52
  --capacity N       module library size (default: the model's)
  --enroll SLOT:ID   store virtual finger ID in slot SLOT at start (comma-separated list)

control commands on stdin, one per line (each answered by "ok: ..." or "error: ..."):
  finger ID              put virtual finger ID (a number, the synthetic finger seed) on the sensor
  eye ID                 show virtual eye ID to an iris camera
  lift                   take the finger (or eye) away
  enroll SLOT ID         store virtual finger ID in module slot SLOT
  capture                (iris) capture through the in-process driver; prints size and quality
  fault NAME on|off|N    switch a fault: bad-checksum, dropped-bytes (on, or for the next N packets),
                         stall, unplug (on: socat stops and the port vanishes; off: plugged back
                         in at the same path, library kept), no-finger, low-quality
  quit                   stop the simulator
Stop it with Ctrl-C (SIGINT) or SIGTERM as well.`;

const SERIAL_FAMILIES: Record<string, ScannerFamily> = { r30x: 'r30x', gt521: 'gt521' };
const DEFAULT_BAUD: Record<string, number> = { r30x: 57600, gt521: 9600 };

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

const command: Command = {
  summary: 'serve a simulated scanner module on a pseudo-terminal (r30x, gt521) or in-process (iris)',
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      {
        link: { type: 'string' },
        baud: { type: 'string' },
        model: { type: 'string' },
        capacity: { type: 'string' },
        enroll: { type: 'string' },
      },
      USAGE,
    );
    const kind = positionals[0];
    if (!kind || positionals.length > 1) throw new AgentError('CLI_USAGE', 'name one family: r30x, gt521 or iris', {}, { hint: USAGE });
    const capacity = intFlag('capacity', values.capacity);
    const options = {
      images: syntheticImages,
      ...(values.model ? { model: values.model } : {}),
      ...(capacity !== undefined ? { capacity } : {}),
    };
    let simulator: SimulatorControl;
    let pair: SocatPair | undefined;
    let inProcess: Scanner | undefined;
    let serialBaud = 0;
    let stopping = false;

    if (kind === 'iris' || kind === 'iris-hid') {
      const sim = await createSimulatedScanner('iris-hid', options);
      const info = await sim.scanner.open();
      simulator = sim.simulator;
      inProcess = sim.scanner;
      process.stdout.write(`device: in-process ${info.model} (${info.family})\n`);
    } else {
      const family = SERIAL_FAMILIES[kind];
      if (!family) throw new AgentError('CLI_USAGE', `unknown family "${kind}"`, { family: kind }, { hint: USAGE });
      if (!values.link) throw new AgentError('CLI_USAGE', '--link PATH is required for a serial module', {}, { hint: USAGE });
      const baud = intFlag('baud', values.baud, DEFAULT_BAUD[kind])!;
      serialBaud = baud;
      pair = await createSocatPair(values.link);
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
      process.stdout.write(`device: ${pair.hostLink}\n`);
      process.stderr.write(`simulating ${kind} at ${baud} baud; control commands on stdin ("edge-agent help simulate")\n`);
    }
    for (const item of (values.enroll ?? '').split(',').filter(Boolean)) {
      const [slot, id] = item.split(':').map(Number);
      if (!Number.isInteger(slot) || !Number.isInteger(id)) throw new AgentError('CLI_USAGE', `--enroll takes SLOT:ID pairs, got "${item}"`, {}, { hint: USAGE });
      if (!simulator.enroll) throw new AgentError('CLI_USAGE', `this simulator keeps no module slots`, {});
      simulator.enroll(slot!, id!);
    }

    return await new Promise<number>((resolve) => {
      const rl = createInterface({ input: process.stdin });
      const stop = async (code: number) => {
        if (stopping) return;
        stopping = true;
        rl.close();
        process.stdin.destroy();
        await inProcess?.close().catch(() => undefined);
        await simulator.close().catch(() => undefined);
        await pair?.close();
        resolve(code);
      };
      process.once('SIGINT', () => void stop(0));
      process.once('SIGTERM', () => void stop(0));
      rl.on('line', (line) => {
        const words = line.trim().split(/\s+/).filter(Boolean);
        if (words.length === 0) return;
        try {
          if (words[0] === 'capture') {
            if (!inProcess) throw new AgentError('CLI_USAGE', 'capture works for the in-process iris simulator; a serial module is captured through its port');
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

    function control(words: string[]): string | void {
      const [cmd, a, b] = words;
      const num = (v: string | undefined, what: string) => {
        const n = Number(v);
        if (v === undefined || !Number.isInteger(n) || n < 0) throw new AgentError('CLI_USAGE', `${cmd} needs ${what} (a whole number)`);
        return n;
      };
      switch (cmd) {
        case 'finger':
        case 'eye':
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
          return;
        }
        case 'quit':
        case 'exit':
          return 'quit';
        default:
          throw new AgentError('CLI_USAGE', `unknown control command "${cmd}"; use finger, eye, lift, enroll, fault or quit`);
      }
    }
  },
};
export default command;
