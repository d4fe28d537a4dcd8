/**
 * `edge-agent doctor`: every check a technician needs to trust a terminal, listed here in the
 * order they are reported. The config check comes first; the others need a valid config and are
 * given what the checks before them found (the secrets). Without a valid config each is reported
 * as not checked, unless its step says otherwise.
 */
import type { AgentConfig } from '../../config/config.js';
import type { LoadConfigOptions } from '../../config/load.js';
import type { ConfigLocation } from '../../config/locate.js';
import type { Secrets } from '../../config/secrets.js';
import type { ClockState } from '../../terminal/clock-sources.js';
import { checkApiToken } from './api.js';
import { type CheckResult, warn } from './check.js';
import { type ClockFigures, checkClock, checkClockFigures } from './clock.js';
import { checkConfig } from './config.js';
import { checkModels } from './models.js';
import { checkMqttConnection } from './mqtt.js';
import { checkOutbox } from './outbox.js';
import type { DoctorReport } from './report.js';
import { checkScanners, type HeldScanner, type ScannerProbe } from './scanners.js';
import { checkOpsKey, checkSecrets, checkTemplateKey, type TemplateKeyVerifier } from './secrets.js';
import { checkDatabase, checkDisk, checkFileModes } from './storage.js';

export interface DoctorOptions {
  config: LoadConfigOptions;
  /** Where the rule found the config (`locateConfig`): none found is a failed config check naming where it looked. */
  location?: ConfigLocation;
  /** Override the secrets file (default: from the config). */
  secretsFile?: string;
  credentialsDir?: string | null;
  probeScanner?: ScannerProbe | null;
  verifyTemplateKey?: TemplateKeyVerifier | null;
  daemonRunning?: (dataDir: string) => Promise<boolean>;
  /** The scanners as the running agent reports them (null when it cannot say). */
  heldScanners?: (dataDir: string) => Promise<HeldScanner[] | null>;
  detectClock?: () => Promise<ClockState>;
  timeoutMs?: number;
}

/** What a step is given: the options, the valid config, and what the steps before it found. */
interface DoctorRun {
  options: DoctorOptions;
  config: AgentConfig;
  /** The secrets as the secrets check read them; null when it could not. */
  secrets: Secrets | null;
  /** How long a network check waits for an answer. */
  timeoutMs: number;
  /** The figures behind the clock check, for --json. */
  clock?: ClockFigures;
}

interface DoctorStep {
  /** The checks it reports (the scanner checks are named one a scanner; `scanners` stands for them). */
  names: readonly string[];
  run: (run: DoctorRun) => Promise<CheckResult[]>;
  /**
   * Without a valid config a step is reported as not checked, unless this says otherwise: `omit`
   * leaves it out of the report; a function checks without a config, after the steps that cannot.
   */
  withoutConfig?: 'omit' | ((options: DoctorOptions) => Promise<CheckResult>);
}

/** Every check after the config's, in the order they are reported. */
const STEPS: readonly DoctorStep[] = [
  {
    names: ['secrets'],
    run: async (run) => {
      const { result, secrets } = checkSecrets(run.config, {
        ...(run.options.secretsFile ? { file: run.options.secretsFile } : {}),
        credentialsDir: run.options.credentialsDir,
      });
      run.secrets = secrets;
      return [result];
    },
  },
  {
    // The two network checks wait for their answers side by side.
    names: ['api-token', 'mqtt'],
    run: ({ config, secrets, timeoutMs }) =>
      Promise.all([
        checkApiToken({
          url: config.api.url,
          pathForm: config.api.pathForm,
          clientId: config.api.clientId,
          timeoutMs,
          apiKey: secrets?.apiKey ?? null,
          apiSecret: secrets?.apiSecret ?? null,
          required: config.upstream.includes('api'),
        }),
        checkMqttConnection({
          config,
          secrets: { mqttUsername: secrets?.mqttUsername ?? null, mqttPassword: secrets?.mqttPassword ?? null },
          timeoutMs,
        }),
      ]),
  },
  { names: ['ops-key'], run: async ({ config, secrets }) => [checkOpsKey(config, secrets)] },
  {
    names: ['scanners'],
    run: async ({ config, options }) => {
      const running = options.daemonRunning ? await options.daemonRunning(config.dataDir) : false;
      const held = running && options.heldScanners ? await options.heldScanners(config.dataDir).catch(() => null) : null;
      return checkScanners(config.scanners, options.probeScanner ?? null, { simulate: config.simulate, daemonRunning: running, held });
    },
  },
  {
    names: ['template-key'],
    run: async ({ config, secrets, options }) => [
      await checkTemplateKey(config.dataDir, secrets?.templateKey ?? null, options.verifyTemplateKey ?? null),
    ],
  },
  {
    names: ['models'],
    run: async ({ config }) => [await checkModels(config.scanners.length > 0 || config.simulate)],
    withoutConfig: 'omit',
  },
  { names: ['database'], run: async ({ config }) => [await checkDatabase(config.dataDir)] },
  { names: ['file-modes'], run: async ({ config }) => [checkFileModes(config.dataDir)] },
  { names: ['disk'], run: async ({ config }) => [await checkDisk(config.dataDir)], withoutConfig: 'omit' },
  {
    names: ['clock'],
    run: async (run) => {
      const { result, figures } = await checkClockFigures(run.options.detectClock, run.config);
      run.clock = figures;
      return [result];
    },
    withoutConfig: (options) => checkClock(options.detectClock),
  },
  {
    names: ['outbox'],
    run: async ({ config }) => [await checkOutbox(config.dataDir, { sinks: config.upstream, maxPending: config.outbox.maxPending })],
  },
];

export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const { result, config } = checkConfig(options.config, options.location);
  const checks: CheckResult[] = [result];
  if (!config) {
    const why = options.location && !options.location.file ? 'there is no config' : 'the config is not valid';
    const withoutConfig: Array<(options: DoctorOptions) => Promise<CheckResult>> = [];
    for (const step of STEPS) {
      if (step.withoutConfig === 'omit') continue;
      if (step.withoutConfig) withoutConfig.push(step.withoutConfig);
      else for (const name of step.names) checks.push(warn(name, `not checked: ${why}`, 'fix the config first (see the config check)'));
    }
    for (const check of withoutConfig) checks.push(await check(options));
    return { ok: false, checks };
  }
  const run: DoctorRun = { options, config, secrets: null, timeoutMs: options.timeoutMs ?? Math.min(config.api.timeoutMs, 10_000) };
  for (const step of STEPS) checks.push(...(await step.run(run)));
  return { ok: checks.every((c) => c.status !== 'fail'), checks, ...(run.clock ? { clock: run.clock } : {}) };
}
