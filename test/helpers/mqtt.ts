/** MQTT helpers for tests: the first message on a topic (retained or live) that satisfies a predicate. */
import mqtt from 'mqtt';

export function nextMessage(
  url: string,
  topic: string,
  predicate: (payload: string) => boolean = () => true,
  timeoutMs = 15_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = mqtt.connect(url);
    const timer = setTimeout(() => {
      c.end(true);
      reject(new Error(`no matching message on ${topic} within ${timeoutMs} ms`));
    }, timeoutMs);
    c.on('message', (_t, m) => {
      const s = m.toString();
      if (predicate(s)) {
        clearTimeout(timer);
        c.end(true);
        resolve(s);
      }
    });
    c.on('connect', () => void c.subscribe(topic, { qos: 1 }));
  });
}
