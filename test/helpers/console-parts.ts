/**
 * Parts for unit tests of one console feature (the integration fixture is console.ts): a context with the config's default settings, a
 * broker link held in memory (what a feature published, and whether it is "connected"), and
 * terminals fed into the fleet as the broker would deliver them.
 */
import { ConfigSchema } from '../../src/config/config.js';
import { type BrokerLink, type ConsoleContext, type ConsoleOptions, consoleContext } from '../../src/console/console-context.js';

export type ConsoleSettings = ConsoleOptions['settings'];

export function testContext(
  over: Partial<Omit<ConsoleOptions, 'settings'>> & { settings?: Partial<ConsoleSettings> } = {},
): ConsoleContext {
  const defaults = ConfigSchema.parse({}).console;
  return consoleContext({
    url: 'mqtt://127.0.0.1:1',
    prefix: 'attendance',
    maxPayloadBytes: 64 * 1024,
    login: null,
    signer: null,
    ...over,
    settings: { ...defaults, ...over.settings },
  });
}

export interface MemoryBroker extends BrokerLink {
  connected: boolean;
  published: Array<{ topic: string; payload: string }>;
  /** Topics followed, with their handlers. */
  followed: Map<string, (payload: Buffer) => void>;
  /** Makes the next `n` publishes fail. */
  failNext(n: number): void;
}

export function memoryBroker(): MemoryBroker {
  let failing = 0;
  const link: MemoryBroker = {
    connected: true,
    published: [],
    followed: new Map(),
    failNext: (n) => {
      failing = n;
    },
    publish: async (topic, payload) => {
      if (failing > 0) {
        failing--;
        throw new Error('the broker did not take it');
      }
      link.published.push({ topic, payload });
    },
    follow: (topic, handler) => {
      link.followed.set(topic, handler);
    },
  };
  return link;
}

/** A terminal's state, info and metrics, applied as live (not retained) messages. */
export function feedTerminal(
  ctx: ConsoleContext,
  site: string,
  terminal: string,
  parts: { state?: string; info?: Record<string, unknown>; metrics?: Record<string, unknown> },
  now = Date.now(),
): void {
  const base = `${ctx.options.prefix}/${site}/${terminal}`;
  if (parts.info) ctx.fleet.apply(`${base}/info`, Buffer.from(JSON.stringify(parts.info)), false, now);
  if (parts.metrics) ctx.fleet.apply(`${base}/metrics`, Buffer.from(JSON.stringify(parts.metrics)), false, now);
  if (parts.state !== undefined) ctx.fleet.apply(`${base}/state`, Buffer.from(parts.state), false, now);
}
