import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../../src/config/config.js';
import { checkMqttConnection } from '../../../../src/setup/doctor/mqtt.js';
import { startBroker, type TestBroker } from '../../../helpers/broker.js';

const none = { mqttUsername: null, mqttPassword: null };
let broker: TestBroker;
beforeAll(async () => {
  broker = await startBroker({ prefer: 'aedes' });
});
afterAll(() => broker.stop());

describe('doctor: the MQTT check against a real broker', () => {
  it("connects and says the broker's role: monitoring only, or delivery as well", async () => {
    const monitoring = await checkMqttConnection({ config: parseConfig({ mqtt: { url: broker.url } }), secrets: none, timeoutMs: 5000 });
    expect(monitoring).toEqual({
      name: 'mqtt',
      status: 'pass',
      detail: `connected to ${broker.url} (monitoring only: punches are not delivered here)`,
      hint: null,
    });
    const delivery = await checkMqttConnection({
      config: parseConfig({ mqtt: { url: broker.url }, upstream: ['api', 'mqtt'] }),
      secrets: none,
      timeoutMs: 5000,
    });
    expect(delivery.detail).toBe(`connected to ${broker.url} (monitoring and delivery of punches)`);
  });

  it('no URL: a warning for monitoring, a failure when punches should go to the broker', async () => {
    expect(await checkMqttConnection({ config: parseConfig({}), secrets: none })).toMatchObject({
      status: 'warn',
      detail: 'no MQTT broker configured (mqtt.url is null): no remote monitoring',
    });
    expect(await checkMqttConnection({ config: parseConfig({ upstream: ['mqtt'] }), secrets: none })).toMatchObject({
      status: 'fail',
      hint: 'give --mqtt URL to "edge-agent provision", or --upstream api',
    });
  });
});
