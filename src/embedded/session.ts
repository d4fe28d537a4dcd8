/**
 * `run --embedded` as a daemon session: the embedded parts started, their banner printed, and,
 * after the first start, the demo floor (enrolment of the synthetic employees, then visitors)
 * narrated on stdout.
 *
 * Tested in test/integration/embedded-default.test.ts (run --embedded: the banner, the demo floor's
 * punches, a clean stop).
 */
import { scoreLabel } from '../core/identification.js';
import { createAttendanceClient } from '../daemon/upstreams.js';
import type { Session } from '../daemon/supervisor.js';
import { DEMO_EMPLOYEES, startDemoFloor, startEmbeddedParts } from './embedded.js';

export async function embeddedSession(
  dataDir: string,
  out: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<Session> {
  const parts = await startEmbeddedParts(dataDir);
  for (const line of parts.banner) out(line);
  let stopVisitors: (() => Promise<void>) | null = null;
  const names = new Map<string, string>(DEMO_EMPLOYEES.map((e) => [e.employeeCode, `${e.firstName} ${e.lastName}`]));
  return {
    config: parts.config,
    secrets: parts.secrets,
    embedded: true,
    reload: async () => ({ config: parts.config, secrets: parts.secrets }),
    afterStart: async (rt, daemon) => {
      const say = (line: string) => out(`${new Date().toTimeString().slice(0, 8)}  ${line}`);
      for (const w of rt.workers.values()) {
        w.on('capture', (o) => {
          const who = o.employeeCode ? `${o.employeeCode} (${names.get(o.employeeCode) ?? '?'})` : 'someone unknown';
          const iris = o.scanner.includes('iris');
          if (o.result === 'punched')
            say(
              `punch: ${who} checked ${o.direction ?? '?'} by ${iris ? 'iris' : 'finger'} [${o.path} match, ${scoreLabel(o.score, iris ? 'iris' : 'finger')}] durable in ${Math.round(o.latencyMs)} ms`,
            );
          else if (o.result === 'duplicate') say(`punch: ${who} again within the dedupe window: nothing recorded`);
          else say(`capture: ${o.result}${o.detail ? ` (${o.detail})` : ''}`);
        });
      }
      daemon.context?.uploader.on('delivered', (d) => say(`delivered: ${d.count} punch(es) to ${d.sink}`));
      const enrolled = rt.cache
        ? new Set((await rt.cache.listTemplateMeta({})).map((t) => `${t.employeeCode}:${t.modality}`))
        : new Set<string>();
      const missing = DEMO_EMPLOYEES.filter(
        (e) => !enrolled.has(`${e.employeeCode}:finger`) || !enrolled.has(`${e.employeeCode}:iris`),
      ).length;
      if (missing === 0)
        say('the synthetic employees were enrolled at an earlier start (their templates are in the data folder); they punch now and then');
      else if (missing === DEMO_EMPLOYEES.length)
        say(
          'enrolling the synthetic employees through the simulated scanners (this first start only: the templates stay in the data folder); those enrolled start punching now and then',
        );
      else say(`enrolling the ${missing} synthetic employee(s) an earlier start did not finish; the others punch now and then`);
      stopVisitors = startDemoFloor(rt, createAttendanceClient(parts.config, parts.secrets), say);
    },
    close: async () => {
      await stopVisitors?.();
      await parts.close();
    },
  };
}
