import { AgentError } from '../../../src/core/errors.js';
import { MemorySink } from './memory-sink.fixture.js';
import { sinkContract } from './sink.contract.js';

// The contract itself, run against the in-memory sink the uploader's unit tests use.
sinkContract('memory', async () => {
  const sink = new MemorySink('memory');
  return {
    sink,
    known: async () => undefined,
    received: async () => {
      const byKey = new Map<string, string>();
      for (const i of sink.accepted) {
        const key = i.direction === 'in' ? `${i.employeeCode}|${i.localTime}` : `${i.employeeCode}|${i.inTime}`;
        byKey.set(key, i.direction === 'in' ? (byKey.get(key) ?? '') : i.localTime);
      }
      return [...byKey].map(([k, out]) => `${k}|${out}`);
    },
    outage: async () => {
      sink.failWith = new AgentError('MQTT_UNAVAILABLE', 'down', {}, { retryable: true });
    },
    restore: async () => {
      sink.failWith = null;
    },
    stall: async () => {
      let end!: () => void;
      sink.hold = new Promise<void>((r) => (end = r));
      return async () => {
        sink.hold = null;
        end();
      };
    },
    teardown: async () => undefined,
  };
});
