/**
 * The console's feed: one MQTT client subscribed to the retained state, info and metrics of every
 * terminal under the prefix, applied to the fleet model. It lends the other features the broker
 * (`BrokerLink`): retained publishing, and topics of their own (Home Assistant's status).
 */
import mqtt, { type MqttClient } from 'mqtt';
import { AgentError, toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { publishChecked } from '../upload/mqtt-publish.js';
import type { BrokerLink, ConsoleContext, ConsoleFeature } from './console-context.js';

const log = logger('console');

export class MqttFeed implements ConsoleFeature, BrokerLink {
  readonly name = 'mqtt-feed';
  readonly #ctx: ConsoleContext;
  readonly #followed = new Map<string, (payload: Buffer) => void>();
  #client: MqttClient | null = null;

  constructor(ctx: ConsoleContext) {
    this.#ctx = ctx;
    ctx.fleet.on('dropped', (reason) => {
      ctx.health.dropped++;
      log.debug({ reason }, 'a message was not taken');
    });
  }

  get connected(): boolean {
    return this.#client?.connected === true;
  }

  follow(topic: string, handler: (payload: Buffer) => void): void {
    this.#followed.set(topic, handler);
  }

  publish(topic: string, payload: string): Promise<void> {
    const client = this.#client;
    if (!client) return Promise.reject(new AgentError('MQTT_UNAVAILABLE', 'the console is not connected to the broker', { topic }));
    return publishChecked(client, topic, payload, { qos: 1, retain: true }, Math.max(this.#ctx.options.maxPayloadBytes, 1024 * 1024));
  }

  start(): void {
    const { options: o, health, fleet, events } = this.#ctx;
    const client = mqtt.connect(o.url, {
      reconnectPeriod: 2000,
      connectTimeout: 10_000,
      ...o.mqttOptions,
      clientId: o.mqttOptions?.clientId ?? `console-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
      clean: true,
    });
    this.#client = client;
    client.on('connect', () => {
      health.mqttConnected = true;
      events.brokerChanged(true);
      log.info({ url: o.url }, 'console connected to the broker');
      const topics = ['state', 'info', 'metrics'].map((leaf) => `${o.prefix}/+/+/${leaf}`);
      topics.push(...this.#followed.keys());
      // QoS 0: a broker queues at most so many QoS 1 messages for a client (Mosquitto's
      // max_queued_messages, 1000 by default) and drops the rest, so a QoS 1 subscription of a
      // thousand terminals' retained state, info and metrics loses two thirds of them. The console
      // needs only the latest of each, which a new subscription brings again after a reconnect.
      client.subscribeAsync(topics, { qos: 0 }).catch((err: unknown) => log.warn({ err: (err as Error).message }, 'could not subscribe'));
    });
    client.on('close', () => {
      if (health.mqttConnected) log.warn({ url: o.url }, 'console lost the broker; reconnecting');
      health.mqttConnected = false;
      events.brokerChanged(false);
    });
    client.on('error', (err) => log.warn({ err: err.message }, 'MQTT error'));
    client.on('message', (topic, payload, packet) => {
      health.messages++;
      const followed = this.#followed.get(topic);
      if (followed) return followed(payload);
      try {
        fleet.apply(topic, payload, packet.retain === true);
      } catch (err) {
        health.dropped++;
        log.warn({ err: toAgentError(err).message, topic: topic.slice(0, 200) }, 'a message could not be applied');
      }
    });
  }

  /** Disconnects cleanly; a client still connecting is cut (mqtt.js would let that connection complete and stay). */
  async stop(): Promise<void> {
    const client = this.#client;
    this.#client = null;
    await client?.endAsync(!client.connected).catch(() => undefined);
  }
}
