/**
 * The agent's configuration schema (zod): every key with its default, the types the rest of the
 * code imports (`AgentConfig`, `ScannerConfig`), and `parseConfig`, which validates a raw object
 * and explains what is wrong (`explain.ts`: the key, the bad value, the fix). Secrets never live
 * here: see `secrets.ts`.
 *
 * Where a raw config comes from: `load.ts` reads the file and layers defaults < file <
 * environment (`env.ts`) < command-line flags (`flags.ts`).
 */
import { z } from 'zod';
import { configError, explainIssues } from './explain.js';
import type { AnySchema } from './schema-path.js';

/** True for a time zone this Node (ICU) knows: `Europe/Berlin`, `UTC`, ... */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const level = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'a time of day as HH:MM');

/** The badge readers' line formats (drivers/badge/formats.ts; a test keeps the lists in step). */
export const BADGE_LINE_FORMATS = ['em4100-dec', 'em4100-hex', 'wiegand26', 'wiegand34'] as const;
const BADGE_FAMILIES = new Set(['badge-serial', 'badge-hid']);

export const ScannerConfigSchema = z
  .strictObject({
    family: z.enum(['r30x', 'gt521', 'iris-hid', 'badge-serial', 'badge-hid']),
    /** Serial device path, HID path, or `sim` for a simulator. */
    path: z.string().min(1),
    baud: z.number().int().positive().optional(),
    /** R30x module address and password (defaults 0xFFFFFFFF and 0). */
    address: z.number().int().min(0).max(0xffffffff).optional(),
    /** Badge readers: the line format the reader sends (default em4100-dec). */
    format: z.enum(BADGE_LINE_FORMATS).optional(),
  })
  .superRefine((s, ctx) => {
    if (s.format !== undefined && !BADGE_FAMILIES.has(s.family)) {
      ctx.addIssue({ code: 'custom', path: ['format'], message: `is the line format of a badge reader; a ${s.family} scanner has none` });
    }
    if (s.family === 'badge-hid' && s.format === 'em4100-hex') {
      ctx.addIssue({
        code: 'custom',
        path: ['format'],
        message: 'em4100-hex frames start with STX, which a keyboard-wedge reader cannot type',
      });
    }
  });

export const ConfigSchema = z.strictObject({
  /** Incremented by `edge-agent provision` on each edit; reported in /info. */
  configVersion: z.number().int().min(0).default(0),
  terminal: z
    .strictObject({
      id: z
        .string()
        .regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, dot, dash or underscore, at most 64')
        .default('terminal-1'),
      site: z
        .string()
        .regex(/^[A-Za-z0-9._-]{1,64}$/, 'letters, digits, dot, dash or underscore, at most 64')
        .default('site-1'),
      /** IANA time zone used for local punch times and tzOffset. */
      timeZone: z.string().min(1).refine(isTimeZone, 'not a known IANA time zone').default('UTC'),
      mode: z.enum(['in', 'out', 'toggle']).default('toggle'),
    })
    .prefault({}),
  /** Where the database and state live. */
  dataDir: z.string().min(1).default('./data'),
  /**
   * The daemon's control socket (enroll, identify, punch while it runs); null means
   * `<dataDir>/control.sock`. Set it when the data folder is on a file system without sockets
   * (some network or FAT mounts). A Unix socket path is at most 107 bytes.
   */
  controlSocket: z.string().min(1).max(107).nullable().default(null),
  /** The 0600 secrets file (never the secrets themselves); null means `<dataDir>/secrets.yaml`. */
  secretsFile: z.string().min(1).nullable().default(null),
  api: z
    .strictObject({
      /** Base URL of the attendance service; null means no API upstream. */
      url: z
        .url({ protocol: /^https?$/ })
        .nullable()
        .default(null),
      pathForm: z.enum(['api', 'attendance']).default('api'),
      clientId: z.string().min(1).default('edge-agent'),
      tzOffsetUnit: z.enum(['minutes', 'hours']).default('minutes'),
      timeoutMs: z.number().int().positive().default(10_000),
    })
    .prefault({}),
  mqtt: z
    .strictObject({
      url: z
        .string()
        .regex(/^(mqtts?|wss?|tcp|ssl):\/\/.+/, 'an mqtt://, mqtts://, ws:// or wss:// URL')
        .nullable()
        .default(null),
      prefix: z
        .string()
        .regex(/^[^#+/][^#+]*$/, 'a topic prefix without + or # and not starting with /')
        .default('attendance'),
      username: z.string().nullable().default(null),
      tls: z
        .strictObject({
          ca: z.string().nullable().default(null),
          cert: z.string().nullable().default(null),
          key: z.string().nullable().default(null),
        })
        .prefault({}),
      keepaliveSec: z.number().int().positive().default(30),
      /** The largest payload the agent publishes or accepts as a site record (256 KiB); MQTT's own limit is 256 MiB. */
      maxPayloadBytes: z
        .number()
        .int()
        .min(4096)
        .max(268_435_455)
        .default(256 * 1024),
    })
    .prefault({}),
  /**
   * Where punches go; with both, an event is done when every sink has it. `mqtt.url` alone is
   * monitoring (ops, site sync): delivery to the broker is `upstream: [mqtt]` or `[api, mqtt]`.
   */
  upstream: z.array(z.enum(['api', 'mqtt'])).default(['api']),
  outbox: z
    .strictObject({
      batchSize: z.number().int().min(1).max(1000).default(200),
      retentionDays: z.number().min(0).default(30),
      /**
       * Pending + dead punches at which new punches are refused (nothing recorded is ever dropped):
       * a month of a busy gate with room to spare, about 300 MB of disk when full.
       */
      maxPending: z.number().int().positive().default(1_000_000),
      backoffBaseMs: z.number().int().positive().default(1000),
      backoffCapMs: z.number().int().positive().default(300_000),
      /**
       * Punches whose time is not trusted are held until it is corrected, however long; after this
       * many hours of waiting (on the monotonic clock) an alert is raised in metrics, queue status and doctor.
       */
      unsyncedHoldHours: z.number().min(0).default(24),
    })
    .prefault({}),
  clock: z
    .strictObject({
      /** Time services asked whether the clock is synchronized, first that can tell decides; [] leaves the year and the times already seen. */
      sources: z.array(z.enum(['timedatectl', 'timesyncd', 'chrony'])).default(['timedatectl', 'timesyncd', 'chrony']),
      /** A wall-clock move against the monotonic clock larger than this between two ticks (1 s) is a step. */
      stepThresholdSec: z.number().positive().default(2),
      /**
       * Untrusted punches of an earlier boot that never had a trusted time (no monotonic link): `hold`
       * them with an alert until "edge-agent queue release-unsynced", or `send` them as they are, marked.
       */
      earlierBootPunches: z.enum(['hold', 'send']).default('hold'),
    })
    .prefault({}),
  policy: z
    .strictObject({
      dedupeWindowSec: z.number().min(0).default(60),
      /** Local time at which a new working day starts for toggle mode. */
      dayBoundary: hhmm.default('04:00'),
      /** An open check-in older than this is not closed by the next punch in toggle mode. */
      maxShiftHours: z.number().positive().default(16),
      shift: z.string().nullable().default(null),
      /**
       * What a person must present to punch: `either` a finger (or eye) or a badge, only a
       * `biometric`, only a `badge`, or `both`: a badge, then the same person's finger or eye
       * within `bothWithinSec` seconds. Manual punches are not affected.
       */
      require: z.enum(['either', 'biometric', 'badge', 'both']).default('either'),
      bothWithinSec: z.number().positive().max(300).default(15),
      /**
       * When a finger leaves two enrolled persons close (or the best one not sure enough), `on`
       * asks for another finger and decides on both, fused by person among those persons only;
       * `off` rejects at once. Either way nobody is punched for a person the finger did not single out.
       */
      secondFinger: z.enum(['on', 'off']).default('on'),
      /** How long the person has to lift the first finger and place another one. */
      secondFingerTimeoutSec: z.number().positive().max(60).default(10),
    })
    .prefault({}),
  scanners: z.array(ScannerConfigSchema).default([]),
  /** Use simulated scanners (the embedded default). */
  simulate: z.boolean().default(false),
  biometrics: z
    .strictObject({
      fingerThreshold: z.number().min(0).default(40),
      irisThreshold: z.number().min(0).max(1).default(0.32),
      /**
       * The chance that somebody not enrolled is taken for an enrolled eye, per search: an iris
       * search accepts its best template only as close as the number of enrolled iris templates
       * allows for this chance (docs/biometrics.md, "Iris 1:N"), never above irisThreshold.
       */
      irisFpir: z.number().gt(0).lt(1).default(1e-3),
      irisShiftRange: z.number().int().min(0).max(32).default(8),
      embedding: z
        .strictObject({
          model: z.string(),
          /** Which scanners' images the model reads. */
          source: z.enum(['finger', 'iris']).default('finger'),
          inputName: z.string().optional(),
          outputName: z.string().optional(),
          width: z.number().int().positive(),
          height: z.number().int().positive(),
          mean: z.number().default(0),
          std: z.number().positive().default(1),
          threshold: z.number().min(-1).max(1).default(0.6),
        })
        .nullable()
        .default(null),
    })
    .prefault({}),
  ops: z
    .strictObject({
      enabled: z.boolean().default(true),
      metricsIntervalSec: z.number().positive().default(30),
      /** How far a signed command's timestamp may be from this terminal's clock, and how long its transaction id is remembered. */
      authWindowSec: z.number().int().min(10).max(3600).default(300),
      /**
       * What the fleet views (fleet, console, /metrics, Home Assistant) do with a terminal's state,
       * info or metrics that carry no valid signature (docs/security.md, Signed telemetry): `show`
       * them marked unverified, or `ignore` them.
       */
      unverifiedTelemetry: z.enum(['show', 'ignore']).default('show'),
    })
    .prefault({}),
  /** The operations console (`edge-agent console`): where it listens, its alert rules, Home Assistant discovery. */
  console: z
    .strictObject({
      /** Listen address; anything but loopback needs a console login (consolePassword in the secrets). */
      host: z.string().min(1).default('127.0.0.1'),
      /** The time zone every time on the page is shown in, named beside them; null: terminal.timeZone, as the CLI. */
      timeZone: z.string().min(1).refine(isTimeZone, 'not a known IANA time zone').nullable().default(null),
      port: z.number().int().min(0).max(65535).default(8470),
      /** Serve HTTPS with this certificate and key (PEM files); the session cookie is then Secure. */
      tls: z
        .strictObject({ cert: z.string().min(1), key: z.string().min(1) })
        .nullable()
        .default(null),
      /** Origins a POST may come from besides the console's own (a reverse proxy's https://ops.example.com). */
      allowedOrigins: z
        .array(z.string().regex(/^https?:\/\/[^/\s]+$/, 'an origin such as https://ops.example.com (scheme, host, optional port; no path)'))
        .max(16)
        .default([]),
      /** How long a login lasts without use. */
      sessionHours: z
        .number()
        .positive()
        .max(24 * 30)
        .default(12),
      /** How much metric history each terminal's page shows (kept in memory, 720 points). */
      historyHours: z
        .number()
        .positive()
        .max(24 * 7)
        .default(24),
      /** Alert rules; null switches a rule off. Alerts are shown in the page and published retained on <prefix>/<site>/alerts. */
      alerts: z
        .strictObject({
          /** A terminal lost (its connection died: the last will) for longer than this. 0 alerts at once. */
          lostMinutes: z.number().min(0).nullable().default(2),
          /** A terminal degraded (a scanner not ready, its clock not trusted, its outbox full, an upstream failing, ...), with the reasons. */
          degraded: z.boolean().default(true),
          /** A terminal that says online but has published nothing for this long. */
          silentMinutes: z.number().positive().nullable().default(5),
          /** The oldest pending punch older than this. */
          oldestPendingMinutes: z.number().positive().nullable().default(30),
          /** Any dead letter. */
          deadLetters: z.boolean().default(true),
          /** The terminal's clock not synchronized (its punches are held until it is). */
          clockUnsynchronized: z.boolean().default(true),
          /** Free disk in the data folder below this many MB. */
          minFreeDiskMb: z.number().min(0).nullable().default(200),
          /** CPU temperature above this many °C. */
          maxCpuTempC: z.number().nullable().default(80),
          /** The terminal's own alerts (metrics alerts: CLOCK_HELD_LONG, ...). */
          terminalAlerts: z.boolean().default(true),
        })
        .prefault({}),
      /** Home Assistant MQTT discovery, opt-in per site: each terminal of these sites becomes a device (["*"]: every site). */
      homeAssistant: z
        .strictObject({
          sites: z.array(z.string().regex(/^(\*|[A-Za-z0-9._-]{1,64})$/, 'a site id, or * for every site')).default([]),
          discoveryPrefix: z
            .string()
            .regex(/^[A-Za-z0-9_-][A-Za-z0-9_/-]{0,63}$/, 'a topic prefix such as homeassistant')
            .default('homeassistant'),
        })
        .prefault({}),
    })
    .prefault({}),
  logging: z
    .strictObject({
      level: level.default('info'),
      format: z.enum(['json', 'pretty']).default('json'),
      /** Per-module levels, e.g. {"drivers:*": "debug"}. */
      modules: z.record(z.string(), level).default({}),
    })
    .prefault({}),
});

export type AgentConfig = z.infer<typeof ConfigSchema>;
export type ScannerConfig = z.infer<typeof ScannerConfigSchema>;

export type DeepPartial<T> = T extends Array<infer _U> ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

/** Validates a raw object and returns the config with every default filled in. */
export function parseConfig(raw: unknown, source = 'config', origins?: (path: string) => string | undefined): AgentConfig {
  const result = ConfigSchema.safeParse(raw);
  if (result.success) return result.data;
  const issues = explainIssues(raw, result.error.issues, ConfigSchema as unknown as AnySchema);
  if (origins) for (const i of issues) i.origin = origins(i.key);
  throw configError(issues, source);
}
