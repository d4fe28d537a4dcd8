/**
 * The control component: the local control socket that `edge-agent enroll` and `identify` use
 * while the daemon holds the scanners (and `identify --template FILE`: identify-template).
 */
import { ControlServer, controlSocketPath } from '../control-socket.js';
import { z } from 'zod';
import { AgentError } from '../../core/errors.js';
import { enroll, identifyOnce, identifyTemplate, MAX_TEMPLATE_BYTES } from '../../terminal/enroller.js';
import type { DaemonComponent } from '../daemon.js';
import { deletePersonTemplates } from '../people.js';
import type { TerminalRuntime } from '../runtime.js';
import { createAttendanceClient } from '../upstreams.js';

/** `identify-template`: a template as base64 (bounded), identified against this terminal's indexes. */
const IdentifyTemplateRequest = z.strictObject({
  modality: z.enum(['finger', 'iris']),
  template: z.string().min(1).max(Math.ceil((MAX_TEMPLATE_BYTES * 4) / 3) + 4).regex(/^[A-Za-z0-9+/]+={0,2}$/, 'base64'),
});

export class ControlComponent implements DaemonComponent {
  readonly name = 'control';
  readonly #rt: TerminalRuntime;
  #server: ControlServer | null = null;

  constructor(rt: TerminalRuntime) {
    this.#rt = rt;
  }

  async start(): Promise<void> {
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
      .handle('identify-template', async (body) => {
        const req = IdentifyTemplateRequest.safeParse(body);
        if (!req.success) throw new AgentError('AGENT_CONTROL_BAD_REQUEST', `identify-template: ${req.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ')}`, {}, { hint: 'send {"modality": "finger"|"iris", "template": "<base64>"}' });
        return identifyTemplate(rt, req.data.modality, Buffer.from(req.data.template, 'base64'));
      })
      .handle('delete-user', (body) => deletePersonTemplates(rt, String(body.employeeCode ?? '')));
    await server.start();
    this.#server = server;
  }

  async stop(): Promise<void> {
    await this.#server?.stop();
    this.#server = null;
  }
}
