/** `edge-agent devices [--json] [--port PATH] [--baud N]`: finds attached scanners. */
import type { Command } from '../command.js';
import { intFlag, parseCommandArgs, printJson } from '../args.js';
import { discoverPorts } from '../../../drivers/discovery.js';

const USAGE = `usage: edge-agent devices [--json] [--port PATH] [--baud N] [--timeout MS]

Lists serial ports and HID devices and asks each serial port, at each family's baud rates, whether
an R30x or GT-521 fingerprint module answers; prints family, model, firmware, library capacity,
templates stored and the baud rate it answered at.

options:
  --json         {"devices":[{"path","transport","family","model","firmware","capacity","templates","baud"}]}
  --port PATH    probe only this port (also a pseudo-terminal such as one from "edge-agent simulate")
  --baud N       probe only at this baud rate
  --timeout MS   how long each probe waits for an answer (default 250)`;

const command: Command = {
  summary: 'find attached scanners (serial and HID) and identify them',
  usage: USAGE,
  async run(argv) {
    const { values } = parseCommandArgs(argv, { json: { type: 'boolean' }, port: { type: 'string' }, baud: { type: 'string' }, timeout: { type: 'string' } }, USAGE, false);
    const baud = intFlag('baud', values.baud);
    const timeoutMs = intFlag('timeout', values.timeout);
    const reports = await discoverPorts({ ...(values.port ? { port: values.port } : {}), ...(baud ? { baud } : {}), ...(timeoutMs ? { timeoutMs } : {}) });
    const devices = reports.flatMap((r) => (r.device ? [r.device] : []));
    if (values.json) {
      printJson({ devices });
      for (const r of reports) if (r.error) process.stderr.write(`${r.path}: ${r.error.code}: ${r.error.message}${r.error.hint ? ` (${r.error.hint})` : ''}\n`);
    } else {
      if (reports.length === 0) process.stdout.write('no serial ports or HID devices found\n');
      for (const r of reports) {
        if (r.device) {
          const d = r.device;
          process.stdout.write(`${d.path}  ${d.family}  ${d.model}${d.firmware ? ` fw ${d.firmware}` : ''}  ${d.baud ? `${d.baud} baud  ` : ''}capacity ${d.capacity ?? '?'}  templates ${d.templates ?? '?'}\n`);
        } else if (r.error) {
          process.stdout.write(`${r.path}  ${r.error.code}: ${r.error.message}${r.error.hint ? `\n  hint: ${r.error.hint}` : ''}\n`);
        } else if (r.transport === 'serial') {
          process.stdout.write(`${r.path}  nothing known answered (tried ${r.tried.join(', ')} in ${(r.ms / 1000).toFixed(1)} s)\n`);
        } else {
          process.stdout.write(`${r.path}  HID device, not a known scanner\n`);
        }
      }
    }
    // Asked about one port and nothing answered: that is a failure the caller should see.
    if (values.port && devices.length === 0) return 1;
    return 0;
  },
};
export default command;
