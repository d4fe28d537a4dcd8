/**
 * Memory and start-up at full size (`bench:scale`, section `templates`): the real `edge-agent run`
 * (built, with the systemd unit's node flags) on a data folder whose encrypted template cache
 * holds 10,000 finger templates and 100,000 iris codes (scale-fill.ts), no scanner.
 *
 * - firstStartMs: spawn to "edge-agent running" the first time: every template decrypted and
 *   prepared, then the index snapshot written;
 * - readyMs: the same for the next start, which loads the encrypted index snapshot (the floor);
 * - rssAfterBuildMb: RSS of run once ready (a second after), from /proc;
 * - 1,000 identifications of each modality through the control socket (`identify-template`,
 *   what `edge-agent identify --template FILE` sends): fingerP95Ms / irisP95Ms are the p95 of
 *   the time the agent spent matching (Identifier), roundTripP95Ms the p95 as the client saw it;
 *   every probe is another impression (capture) of an enrolled finger (eye), `accepted` counts
 *   the right person found (irises: at or under `needed`, the distance the 1:N decision allows for
 *   100,000 templates, 0.190; one synthetic capture an eye, where the terminal enrols three);
 * - rssAfterIdentifyMb: RSS once the 2,000 identifications are done, rssPeakMb the peak.
 * Run from built JavaScript with plain node (built-cli.ts), as the systemd unit runs it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { callDaemon, controlSocketPath } from '../../src/daemon/control-socket.js';
import type { IdentifyOnceResult } from '../../src/terminal/identify-on-demand.js';
import { waitForLine } from '../helpers/cli.js';
import { stopChild } from '../helpers/agent.js';
import { agentCli, eachLine, type AgentCli } from './built-cli.js';
import { fillTemplateCache } from './scale-fill.js';
import { RssSampler, percentile, round } from './proc-sample.js';

export interface TemplatesOptions {
  fingers?: number;
  irises?: number;
  searches?: number;
  cli?: AgentCli;
  log?: (line: string) => void;
}

export const TEMPLATE_FLOORS = { readyMs: 5000, rssAfterIdentifyMb: 250, fingerP95Ms: 150, irisP95Ms: 100 };

interface Started {
  child: ChildProcess;
  readyMs: number;
  build: Record<string, unknown> | null;
}

/** Starts run, resolves at "edge-agent running" with the identifier's build report from its log. */
async function start(cli: AgentCli, args: string[]): Promise<Started> {
  const t0 = performance.now();
  const child = cli.spawnDaemon(args, { EDGE_AGENT_LOG_LEVEL: 'info' });
  let build: Record<string, unknown> | null = null;
  eachLine(child.stdout!, (line) => {
    if (line.includes('identification indexes built')) build = JSON.parse(line) as Record<string, unknown>;
  });
  await waitForLine(child, /edge-agent running/, 600_000, 'stderr');
  child.stderr!.resume();
  return { child, readyMs: Math.round(performance.now() - t0), build };
}

export async function benchTemplates(options: TemplatesOptions = {}): Promise<Record<string, unknown>> {
  const fingers = options.fingers ?? 10_000;
  const irises = options.irises ?? 100_000;
  const searches = options.searches ?? 1000;
  const log = options.log ?? (() => undefined);
  const cli = options.cli ?? agentCli({ log });
  const dir = mkdtempSync(join(tmpdir(), 'edge-agent-bench-templates-'));
  const dataDir = join(dir, 'data');
  const templateKey = randomBytes(32);
  let run: ChildProcess | null = null;
  try {
    log(`storing ${fingers} finger templates and ${irises} iris codes in the encrypted template cache`);
    const tf = performance.now();
    const probes = await fillTemplateCache(dataDir, templateKey, { fingers, irises, probes: searches, log });
    const fillMs = Math.round(performance.now() - tf);
    const secrets = join(dir, 'secrets.yaml');
    writeFileSync(secrets, `templateKey: ${templateKey.toString('hex')}\napiKey: bench\napiSecret: bench\n`, { mode: 0o600 });
    // The uploader has nothing to send: an API nobody listens on is enough.
    const args = ['--data', dataDir, '--terminal', 'gate-templates', '--api', 'http://127.0.0.1:9', '--secrets', secrets];

    log('first start: indexes built from the cache, snapshot written');
    const first = await start(cli, args);
    run = first.child;
    const firstRssMb = new RssSampler(run.pid!).lastMb;
    await stopChild(run);
    run = null;

    log('second start: indexes from the snapshot');
    const second = await start(cli, args);
    run = second.child;
    await new Promise((r) => setTimeout(r, 1000));
    const rss = new RssSampler(run.pid!, 100);
    const rssAfterBuildMb = rss.lastMb;
    const socket = controlSocketPath({ dataDir });
    const identify = async (modality: 'finger' | 'iris', list: Array<{ employeeCode: string; template: Uint8Array }>) => {
      const agentMs: number[] = [];
      const roundTrip: number[] = [];
      let accepted = 0;
      let needed: number | undefined;
      for (let i = 0; i < searches; i++) {
        const p = list[i % list.length]!;
        const t = performance.now();
        const r = (await callDaemon(socket, 'identify-template', {
          modality,
          template: Buffer.from(p.template).toString('base64'),
        })) as IdentifyOnceResult;
        roundTrip.push(performance.now() - t);
        agentMs.push(r.ms);
        if (r.decision === 'accept' && r.employeeCode === p.employeeCode) accepted++;
        needed = r.needed ?? needed;
      }
      return {
        p50Ms: round(percentile(agentMs, 50)!, 2),
        p95Ms: round(percentile(agentMs, 95)!, 2),
        roundTripP95Ms: round(percentile(roundTrip, 95)!, 2),
        accepted,
        searches,
        // Irises: the distance the 1:N decision needed at this gallery's size (iris-decision.ts).
        ...(needed !== undefined ? { needed: round(needed, 4) } : {}),
      };
    };
    log(`${searches} finger identifications`);
    const finger = await identify('finger', probes.fingerProbes);
    log(`${searches} iris identifications`);
    const iris = await identify('iris', probes.irisProbes);
    await new Promise((r) => setTimeout(r, 500));
    rss.sample();
    const rssAfterIdentifyMb = rss.lastMb;
    rss.stop();
    const ts = performance.now();
    const exit = await stopChild(run);
    const stopMs = Math.round(performance.now() - ts);
    run = null;
    return {
      runtime: cli.runtime,
      fingers,
      irises,
      fillMs,
      firstStartMs: first.readyMs,
      firstStartBuild: first.build ? { source: first.build.source, ms: first.build.ms, reason: first.build.reason } : null,
      firstStartRssMb: firstRssMb,
      readyMs: second.readyMs,
      build: second.build ? { source: second.build.source, ms: second.build.ms, caughtUp: second.build.caughtUp } : null,
      rssAfterBuildMb,
      finger,
      iris,
      fingerP95Ms: finger.p95Ms,
      irisP95Ms: iris.p95Ms,
      rssAfterIdentifyMb,
      rssPeakMb: rss.peakMb,
      stopMs,
      exitCode: exit,
      floors: TEMPLATE_FLOORS,
      ratioToFloor: {
        readyMs: round(TEMPLATE_FLOORS.readyMs / Math.max(second.readyMs, 1), 2),
        rssAfterIdentifyMb: round(TEMPLATE_FLOORS.rssAfterIdentifyMb / Math.max(rssAfterIdentifyMb, 1), 2),
        fingerP95Ms: round(TEMPLATE_FLOORS.fingerP95Ms / Math.max(finger.p95Ms, 0.01), 2),
        irisP95Ms: round(TEMPLATE_FLOORS.irisP95Ms / Math.max(iris.p95Ms, 0.01), 2),
      },
    };
  } finally {
    if (run) await stopChild(run);
    rmSync(dir, { recursive: true, force: true });
  }
}
