/**
 * The control component: the local control socket that `edge-agent enroll` and `identify` use
 * while the daemon holds the scanners.
 */
import { ControlServer, controlSocketPath } from '../control-socket.js';
import { enroll, identifyOnce } from '../../terminal/enroller.js';
import { AgentError } from '../../core/errors.js';
import type { DaemonComponent, DaemonContext } from '../daemon.js';
import { deletePersonTemplates } from '../people.js';
import type { TerminalRuntime } from '../runtime.js';
import { createAttendanceClient } from '../upstreams.js';

export class ControlComponent implements DaemonComponent {
  readonly name = 'control';
  readonly #rt: TerminalRuntime;
  #server: ControlServer | null = null;

  constructor(rt: TerminalRuntime) {
    this.#rt = rt;
  }

  async start(ctx: DaemonContext): Promise<void> {
    const rt = this.#rt;
    const client = rt.config.api.url && rt.secrets.apiKey && rt.secrets.apiSecret ? createAttendanceClient(rt.config, rt.secrets) : null;
    const modality = (v: unknown) => (v === 'iris' ? 'iris' : 'finger') as 'finger' | 'iris';
    const server = new ControlServer(controlSocketPath(rt.config.dataDir))
      .handle('ping', async () => ({ pong: true, terminal: rt.config.terminal.id }))
      .handle('status', async () => ({ info: await rt.info(), metrics: await rt.metrics() }))
      .handle('enroll', (body, progress) =>
        enroll(rt, client, {
          employeeCode: String(body.employeeCode ?? ''),
          modality: modality(body.modality),
          position: typeof body.position === 'string' ? body.position : modality(body.modality) === 'iris' ? 'right' : 'right-index',
          ...(typeof body.captures === 'number' ? { captures: body.captures } : {}),
          ...(typeof body.minQuality === 'number' ? { minQuality: body.minQuality } : {}),
        }, progress, typeof body.scanner === 'string' ? body.scanner : undefined),
      )
      .handle('identify', (body, progress) => identifyOnce(rt, modality(body.modality), progress, typeof body.scanner === 'string' ? body.scanner : undefined))
      .handle('delete-user', (body) => deletePersonTemplates(rt, String(body.employeeCode ?? '')))
      // `edge-agent punch` while the daemon runs: the same policy and time authority as a scanner.
      .handle('punch', (body) => {
        const bad = (what: string) => new AgentError('AGENT_CONTROL_BAD_REQUEST', `punch: ${what}`, {}, { hint: 'use edge-agent punch --code C [--in|--out] [--at "yyyy-MM-dd HH:mm:ss"]' });
        if (typeof body.employeeCode !== 'string') throw bad('employeeCode must be a string');
        if (body.at !== undefined && typeof body.at !== 'string') throw bad('at must be "yyyy-MM-dd HH:mm:ss"');
        if (body.tzOffset !== undefined && typeof body.tzOffset !== 'number') throw bad('tzOffset must be a number of minutes');
        if (body.direction !== undefined && body.direction !== 'in' && body.direction !== 'out') throw bad('direction must be in or out');
        return ctx.policy.punch({
          employeeCode: body.employeeCode,
          source: 'manual',
          ...(typeof body.at === 'string' ? { at: body.at } : {}),
          ...(typeof body.tzOffset === 'number' ? { tzOffset: body.tzOffset } : {}),
          ...(body.direction === 'in' || body.direction === 'out' ? { direction: body.direction } : {}),
        });
      });
    await server.start();
    this.#server = server;
  }

  async stop(): Promise<void> {
    await this.#server?.stop();
    this.#server = null;
  }
}
