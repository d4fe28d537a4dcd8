/**
 * `edge-agent devices [--json] [--port PATH] [--baud N] [--timeout MS]`: finds attached scanners.
 *
 * Tested in test/integration/drivers-devices-cli.test.ts (edge-agent devices lists and probes
 * simulated modules) and test/integration/scanner-mismatch.test.ts.
 */
import type { Command } from 'commander';
import { action, defineCommand, intFlag, printJson, withJson } from '../command.js';

type Values = { json?: boolean; port?: string; baud?: string; timeout?: string };

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'devices',
    summary: 'find attached scanners (serial and HID) and identify them',
    audience: 'technician',
    details: `Lists serial ports and HID devices and asks each serial port, at each family's baud rates, whether
an R30x or GT-521 fingerprint module answers; prints family, model, firmware, library capacity,
templates stored and the baud rate it answered at.
Exit code 1 when --port names a port where nothing known answers.`,
  });
  withJson(cmd, 'print {"devices":[{"path","transport","family","model","firmware","capacity","templates","baud"}]}');
  cmd
    .option('--port <path>', 'probe only this port (also a pseudo-terminal such as one from "edge-agent simulate")')
    .option('--baud <n>', 'probe only at this baud rate')
    .option('--timeout <ms>', 'how long each probe waits for an answer (default 250)');
  return action<Values>(cmd, async (values) => {
    const baud = intFlag('baud', values.baud);
    const timeoutMs = intFlag('timeout', values.timeout);
    const { discoverPorts } = await import('../../../drivers/discovery.js');
    const reports = await discoverPorts({
      ...(values.port ? { port: values.port } : {}),
      ...(baud ? { baud } : {}),
      ...(timeoutMs ? { timeoutMs } : {}),
    });
    const devices = reports.flatMap((r) => (r.device ? [r.device] : []));
    if (values.json) {
      printJson({ devices });
      for (const r of reports)
        if (r.error) process.stderr.write(`${r.path}: ${r.error.code}: ${r.error.message}${r.error.hint ? ` (${r.error.hint})` : ''}\n`);
    } else {
      if (reports.length === 0) process.stdout.write('no serial ports or HID devices found\n');
      for (const r of reports) {
        if (r.device) {
          const d = r.device;
          process.stdout.write(
            `${d.path}  ${d.family}  ${d.model}${d.firmware ? ` fw ${d.firmware}` : ''}  ${d.baud ? `${d.baud} baud  ` : ''}capacity ${d.capacity ?? '?'}  templates ${d.templates ?? '?'}\n`,
          );
        } else if (r.error) {
          process.stdout.write(`${r.path}  ${r.error.code}: ${r.error.message}${r.error.hint ? `\n  hint: ${r.error.hint}` : ''}\n`);
        } else if (r.transport === 'serial') {
          process.stdout.write(
            `${r.path}  nothing known answered (tried ${r.tried.join(', ')} in ${(r.ms / 1000).toFixed(1)} s; a badge reader says nothing until a card is read: name it with --scanner badge-serial:${r.path})\n`,
          );
        } else {
          process.stdout.write(
            `${r.path}  HID device, not a known scanner (a keyboard-wedge badge reader is one: name it with --scanner badge-hid:${r.path})\n`,
          );
        }
      }
    }
    // Asked about one port and nothing answered: that is a failure the caller should see.
    if (values.port && devices.length === 0) return 1;
    return 0;
  });
}
