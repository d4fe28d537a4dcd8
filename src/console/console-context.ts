/**
 * What the console's features share, and the shape of a feature. `console.ts` builds the context
 * and lists the features (the MQTT feed, alerts, Home Assistant discovery, the HTTP routes, live
 * updates): they start in that order and stop in reverse. A feature talks to another through the
 * fleet's events (a terminal changed or went), the context's events (the alerts changed, the
 * broker came or went) or the broker link the feed lends.
 */
import type { IClientOptions } from 'mqtt';
import type { AgentConfig } from '../config/config.js';
import { TypedEmitter } from '../core/events.js';
import { AlertBook } from './alert-rules.js';
import { ConsoleFleet } from './console-fleet.js';
import type { ConsoleLogin } from './login.js';
import type { ConsoleHealth } from './prometheus.js';

export interface ConsoleOptions {
  /** The broker, and the options of the console's client (credentials, TLS). */
  url: string;
  mqttOptions?: IClientOptions;
  prefix: string;
  maxPayloadBytes: number;
  settings: AgentConfig['console'];
  /** Overrides of settings.host / settings.port (the command's flags). */
  host?: string;
  port?: number;
  login: ConsoleLogin | null;
  /** The key that signs commands, and its key id; null: no commands. */
  signer: { key: Buffer; kid: string } | null;
  commandTimeoutMs?: number;
}

/** Whether the page may send commands, and why not. */
export interface CommandsState {
  enabled: boolean;
  reason: string | null;
  kid: string | null;
}

/** A part of the console with a life of its own. */
export interface ConsoleFeature {
  readonly name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

/** What the feed lends the other features: the broker, as far as they need it. */
export interface BrokerLink {
  readonly connected: boolean;
  /** Publishes retained at QoS 1 (bounded in size); rejects when the broker does not take it. */
  publish(topic: string, payload: string): Promise<void>;
  /** Subscribes to one more topic (before the feed starts); its messages go to `handler` only. */
  follow(topic: string, handler: (payload: Buffer) => void): void;
}

export interface ConsoleSignals extends Record<string, unknown> {
  /** The set of active alerts changed: the terminal whose row shows it, or null. */
  alerts: string | null;
  /** The console's link to the broker came up (true) or went down (false). */
  broker: boolean;
}

export class ConsoleEvents extends TypedEmitter<ConsoleSignals> {
  alertsChanged(key: string | null): void {
    this.emit('alerts', key);
  }

  brokerChanged(up: boolean): void {
    this.emit('broker', up);
  }
}

export interface ConsoleContext {
  readonly options: ConsoleOptions;
  readonly settings: AgentConfig['console'];
  readonly fleet: ConsoleFleet;
  readonly book: AlertBook;
  /** The console's own counters (`/metrics`); each feature counts its part. */
  readonly health: ConsoleHealth;
  readonly commands: CommandsState;
  readonly events: ConsoleEvents;
}

export function commandsState(o: Pick<ConsoleOptions, 'login' | 'signer'>): CommandsState {
  if (!o.login) return { enabled: false, reason: 'commands need a console login: set consolePassword in the secrets file', kid: null };
  if (!o.signer) return { enabled: false, reason: 'the console holds no ops key (opsKey, opsKeys.<id> or --key-file)', kid: null };
  return { enabled: true, reason: null, kid: o.signer.kid };
}

export function consoleContext(options: ConsoleOptions, now = Date.now()): ConsoleContext {
  const settings = options.settings;
  return {
    options,
    settings,
    fleet: new ConsoleFleet({ prefix: options.prefix, historyHours: settings.historyHours, maxPayloadBytes: options.maxPayloadBytes }),
    book: new AlertBook(),
    health: {
      startedAt: now,
      mqttConnected: false,
      messages: 0,
      dropped: 0,
      sseClients: 0,
      alertPublishes: 0,
      httpRequests: 0,
      commandsSent: 0,
    },
    commands: commandsState(options),
    events: new ConsoleEvents(),
  };
}
