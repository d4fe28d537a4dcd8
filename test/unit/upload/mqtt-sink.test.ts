import { describe, expect, it } from 'vitest';
import type { OutboxItem } from '../../../src/store/outbox.js';
import { eventPayload, eventsTopic, MqttSink } from '../../../src/upload/mqtt-sink.js';

describe('MqttSink (without a broker)', () => {
  it('publishes to <prefix>/<site>/<terminal>/events a JSON payload carrying the id', () => {
    expect(eventsTopic('attendance/', 'plant-2', 'gate-1')).toBe('attendance/plant-2/gate-1/events');
    const item: OutboxItem = {
      seq: 1,
      id: '01ABC',
      employeeCode: '1042',
      direction: 'out',
      localTime: '2026-03-02 16:00:00',
      tzOffset: 60,
      inTime: '2026-03-02 08:00:00',
      inId: '01AAA',
      shift: null,
      source: 'finger',
      score: 88,
      terminalId: 'gate-1',
      createdAt: Date.UTC(2026, 2, 2, 15),
      clockSynced: true,
      clockCorrected: false,
      clockReleased: false,
      timeSource: 'clock',
      bootId: 'b',
      monotonicMs: 0,
      state: 'pending',
      attempts: 0,
    };
    expect(eventPayload(item, 'plant-2')).toEqual({
      id: '01ABC',
      terminal: 'gate-1',
      site: 'plant-2',
      employeeCode: '1042',
      direction: 'out',
      time: '2026-03-02 16:00:00',
      tzOffset: 60,
      inTime: '2026-03-02 08:00:00',
      shift: null,
      source: 'finger',
      score: 88,
      clockSynced: true,
      clockCorrected: false,
      clockReleased: false,
      timeSource: 'clock',
      recordedAt: '2026-03-02T15:00:00.000Z',
    });
  });

  it('refuses to deliver while not connected (retryable), and names an unreadable TLS file', async () => {
    const sink = new MqttSink({ url: 'mqtt://127.0.0.1:1', prefix: 'a', site: 's', terminal: 't' });
    await expect(sink.deliver([{ seq: 1 } as OutboxItem], { signal: new AbortController().signal })).rejects.toMatchObject({
      code: 'MQTT_UNAVAILABLE',
      retryable: true,
    });
    const tls = new MqttSink({
      url: 'mqtts://127.0.0.1:1',
      prefix: 'a',
      site: 's',
      terminal: 't',
      tls: { ca: '/nonexistent/ca.pem', cert: null, key: null },
    });
    await expect(tls.start()).rejects.toMatchObject({ code: 'CONFIG_TLS_UNREADABLE', context: { what: 'ca' } });
    await sink.close();
    await tls.close();
  });
});
