/**
 * Every publish of the agent goes through here: the topic and the payload are checked against
 * MQTT's limits (and the configured payload bound) before mqtt.js sees them, and a failure is an
 * `AgentError`, never a throw from inside mqtt.js.
 *
 * Why before: mqtt.js stores a QoS 1 packet before writing it; a packet that cannot be written
 * (a topic over 65,535 bytes) stays in the store and throws again from the reconnect path, where
 * nothing can catch it, and the process exits. A packet that is never handed over cannot do that.
 */
import type { IClientPublishOptions, MqttClient } from 'mqtt';
import { AgentError } from '../core/errors.js';

/** A topic is a UTF-8 string with a 16-bit length prefix. */
export const MQTT_MAX_TOPIC_BYTES = 65_535;
/** The largest remaining length MQTT can encode (256 MiB - 1), less the fixed header's room. */
export const MQTT_MAX_PACKET_BYTES = 268_435_455;
/** The default bound on what the agent publishes (mqtt.maxPayloadBytes). */
export const DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024;

const LONE_SURROGATE = /\p{Cs}/u;

/** Throws `MQTT_PUBLISH_INVALID` unless `topic` and `payload` can be published as they are. */
export function checkPublishable(topic: string, payload: string | Buffer, maxPayloadBytes: number = DEFAULT_MAX_PAYLOAD_BYTES): void {
  const refuse = (why: string, context: Record<string, unknown>) =>
    new AgentError('MQTT_PUBLISH_INVALID', `not published: ${why}`, { topic: topic.slice(0, 120), ...context });
  const topicBytes = Buffer.byteLength(topic, 'utf8');
  if (topicBytes === 0) throw refuse('the topic is empty', {});
  if (topicBytes > MQTT_MAX_TOPIC_BYTES)
    throw refuse(`the topic is ${topicBytes} bytes; MQTT allows ${MQTT_MAX_TOPIC_BYTES}`, { topicBytes });
  // biome-ignore lint/suspicious/noControlCharactersInRegex: MQTT forbids U+0000 in a topic; this is the check that refuses it
  if (/[+#\u0000]/.test(topic)) throw refuse('the topic holds a wildcard (+ or #) or U+0000', {});
  if (LONE_SURROGATE.test(topic)) throw refuse('the topic is not valid UTF-8 text (a lone surrogate)', {});
  const payloadBytes = typeof payload === 'string' ? Buffer.byteLength(payload, 'utf8') : payload.length;
  const max = Math.min(maxPayloadBytes, MQTT_MAX_PACKET_BYTES - topicBytes - 2 - 2);
  if (payloadBytes > max)
    throw refuse(`the payload is ${payloadBytes} bytes; at most ${max} are sent`, { payloadBytes, maxPayloadBytes: max });
}

/**
 * Checks, then publishes; resolves once the broker took it (PUBACK for QoS 1). Any failure is
 * `MQTT_PUBLISH_INVALID` (nothing sent) or `MQTT_PUBLISH_FAILED` (mqtt.js or the broker refused).
 */
export async function publishChecked(
  client: MqttClient,
  topic: string,
  payload: string | Buffer,
  options: IClientPublishOptions,
  maxPayloadBytes: number = DEFAULT_MAX_PAYLOAD_BYTES,
): Promise<void> {
  checkPublishable(topic, payload, maxPayloadBytes);
  try {
    await client.publishAsync(topic, payload, options);
  } catch (err) {
    throw new AgentError(
      'MQTT_PUBLISH_FAILED',
      `publish to ${topic.slice(0, 120)} failed: ${(err as Error).message}`,
      { topic: topic.slice(0, 120) },
      { cause: err },
    );
  }
}
