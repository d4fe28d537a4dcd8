import { describe, expect, it } from 'vitest';
import { checkPublishable, MQTT_MAX_TOPIC_BYTES } from '../../../src/upload/mqtt-publish.js';

const code = (fn: () => void): string | null => {
  try {
    fn();
    return null;
  } catch (err) {
    return (err as { code: string }).code;
  }
};

describe('what is published over MQTT', () => {
  it('takes topics up to 65,535 UTF-8 bytes and payloads up to the configured bound', () => {
    expect(code(() => checkPublishable('a'.repeat(MQTT_MAX_TOPIC_BYTES), 'x'))).toBeNull();
    expect(code(() => checkPublishable('a/b', Buffer.alloc(4096), 4096))).toBeNull();
    expect(code(() => checkPublishable('a/b', ''))).toBeNull();
  });
  it('refuses, before anything is sent, a topic over the limit (counted in bytes), wildcards, U+0000, lone surrogates and a payload over the bound', () => {
    expect(code(() => checkPublishable('a'.repeat(MQTT_MAX_TOPIC_BYTES + 1), 'x'))).toBe('MQTT_PUBLISH_INVALID');
    expect(code(() => checkPublishable('é'.repeat(40_000), 'x'))).toBe('MQTT_PUBLISH_INVALID'); // 80,000 bytes, 40,000 characters
    expect(code(() => checkPublishable('', 'x'))).toBe('MQTT_PUBLISH_INVALID');
    for (const t of ['a/+/b', 'a/#', 'a\u0000b', 'a\ud800b']) expect(code(() => checkPublishable(t, 'x'))).toBe('MQTT_PUBLISH_INVALID');
    expect(code(() => checkPublishable('a/b', Buffer.alloc(4097), 4096))).toBe('MQTT_PUBLISH_INVALID');
    expect(code(() => checkPublishable('a/b', 'é'.repeat(2049), 4096))).toBe('MQTT_PUBLISH_INVALID');
  });
  it('never puts a huge topic whole into the error', () => {
    try {
      checkPublishable('a'.repeat(70_000), 'x');
    } catch (err) {
      expect(JSON.stringify((err as { context: unknown }).context).length).toBeLessThan(300);
    }
  });
});
