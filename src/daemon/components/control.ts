/**
 * The control component: the local control socket that `edge-agent enroll` and `identify` use
 * while the daemon holds the scanners (and `identify --template FILE`: identify-template).
 *
 * Tested in test/integration/agent-enroll.test.ts (enroll and identify through the running agent's
 * control socket) and test/integration/identify-template.test.ts (a malformed request refused).
 */
import { z } from 'zod';
import { employeeCodeSchema } from '../../api/employee-code.js';
import { BIOMETRIC_MODALITIES, SCANNER_MODALITIES } from '../../core/modality.js';
import { ControlServer, controlSocketPath } from '../control-socket.js';
import { defaultPosition, enroll, MAX_FINGERS } from '../../terminal/enroller.js';
import { identifyOnce, identifyTemplate, MAX_TEMPLATE_BYTES } from '../../terminal/identify-on-demand.js';
import { secondFingerPolicy } from '../../terminal/second-finger.js';
import { isDateTime, MAX_TZ_OFFSET_MINUTES } from '../../api/date-time.js';
import type { DaemonComponent, DaemonContext } from '../component.js';
import { deletePersonTemplates } from '../people.js';
import type { TerminalRuntime } from '../runtime.js';
import { createAttendanceClient } from '../upstreams.js';

/** Finger, eye, or a badge (one card read on the badge reader). */
const modality = z.enum(SCANNER_MODALITIES).default('finger');
const scanner = z.string().min(1).max(128).optional();

/** The bodies of the control actions (edge-agent enroll and identify send them). */
export const EnrollBody = z.strictObject({
  employeeCode: employeeCodeSchema,
  modality,
  position: z.string().min(1).max(32).optional(),
  /** Several fingers (each its own position), the first being `position`'s. */
  positions: z.array(z.string().min(1).max(32)).min(1).max(MAX_FINGERS).optional(),
  fingers: z.number().int().min(1).max(MAX_FINGERS).optional(),
  captures: z.number().int().min(1).max(10).optional(),
  minQuality: z.number().int().min(0).max(100).optional(),
  scanner,
});
export const IdentifyBody = z.strictObject({ modality, scanner });
export const DeleteUserBody = z.strictObject({ employeeCode: employeeCodeSchema });
/** `edge-agent punch` while the daemon runs (tzOffset in minutes east of UTC). */
export const PunchBody = z.strictObject({
  employeeCode: employeeCodeSchema,
  at: z.string().max(19).refine(isDateTime, 'at must be "yyyy-MM-dd HH:mm:ss"').optional(),
  tzOffset: z.number().min(-MAX_TZ_OFFSET_MINUTES).max(MAX_TZ_OFFSET_MINUTES).optional(),
  direction: z.enum(['in', 'out']).optional(),
  /** A punch sent through the control socket is manual, whatever it says. */
  source: z.literal('manual').optional(),
});
/** `identify-template`: a template as base64 (bounded), identified against this terminal's indexes. */
export const IdentifyTemplateBody = z.strictObject({
  modality: z.enum(BIOMETRIC_MODALITIES),
  template: z
    .string()
    .min(1)
    .max(Math.ceil((MAX_TEMPLATE_BYTES * 4) / 3) + 4)
    .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'base64'),
});

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
    const server = new ControlServer(controlSocketPath(rt.config))
      .handle('ping', async () => ({ pong: true, terminal: rt.config.terminal.id }))
      .handle('status', async () => ({ info: await rt.info(), metrics: await rt.metrics() }))
      .handle(
        'enroll',
        (body, progress, signal) =>
          enroll(
            rt,
            client,
            {
              employeeCode: body.employeeCode,
              modality: body.modality,
              position: body.position ?? defaultPosition(body.modality),
              ...(body.positions !== undefined ? { positions: body.positions } : {}),
              ...(body.fingers !== undefined ? { fingers: body.fingers } : {}),
              ...(body.captures !== undefined ? { captures: body.captures } : {}),
              ...(body.minQuality !== undefined ? { minQuality: body.minQuality } : {}),
              signal,
            },
            progress,
            body.scanner,
          ),
        EnrollBody,
      )
      .handle(
        'identify',
        (body, progress, signal) =>
          identifyOnce(rt, body.modality, progress, body.scanner, undefined, signal, secondFingerPolicy(rt.config)),
        IdentifyBody,
      )
      .handle(
        'identify-template',
        (body) => identifyTemplate(rt, body.modality, Buffer.from(body.template, 'base64')),
        IdentifyTemplateBody,
      )
      .handle('delete-user', (body) => deletePersonTemplates(rt, body.employeeCode), DeleteUserBody)
      // `edge-agent punch` while the daemon runs: the same policy and time authority as a scanner.
      .handle(
        'punch',
        (body) =>
          ctx.policy.punch({
            employeeCode: body.employeeCode,
            source: 'manual',
            ...(body.at !== undefined ? { at: body.at } : {}),
            ...(body.tzOffset !== undefined ? { tzOffset: body.tzOffset } : {}),
            ...(body.direction !== undefined ? { direction: body.direction } : {}),
          }),
        PunchBody,
      );
    await server.start();
    this.#server = server;
  }

  async stop(): Promise<void> {
    await this.#server?.stop();
    this.#server = null;
  }
}
