/**
 * Tested in test/integration/ingest-mqtt.test.ts (edge-agent ingest from a real broker into the
 * attendance service).
 */
import { hostname } from 'node:os';
import type { Command } from 'commander';
import { action, defineCommand, intFlag, missingFlag, usageError } from '../command.js';

type Values = {
  mqtt?: string;
  api?: string;
  prefix?: string;
  group?: string;
  share?: boolean;
  'mqtt-client-id'?: string;
  'mqtt-version'?: string;
  connections?: string;
  inflight?: string;
  'session-expiry'?: string;
  keepalive?: string;
  'batch-size'?: string;
  'batch-wait-ms'?: string;
  'dead-letter-topic'?: string;
  'metrics-port'?: string;
  'metrics-host'?: string;
  config?: string;
  secrets?: string;
  'client-id'?: string;
  'api-key'?: string;
  'api-secret-file'?: string;
  'path-form'?: string;
  'log-level'?: string;
  'log-format'?: string;
};

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'ingest',
    summary: 'take the punches terminals publish over MQTT into the attendance API (central; run several to share the load)',
    audience: 'operations',
    details: `Subscribes to <prefix>/+/+/events as a member of a shared subscription ($share/<group>/...),
so every ingest process with the same --group takes its part of the messages. A message is
acknowledged (PUBACK) only after the attendance API accepted its event; repeats are dropped by
event id; events refused for good go to the dead-letter topic with the status, then are
acknowledged. GET /metrics on the metrics port gives lag and rates (Prometheus text), /health the
state. Keep --mqtt-client-id the same when the process restarts: its sessions hold what it had
not acknowledged. SIGTERM drains, then stops. See docs/central.md.`,
  })
    .option('--mqtt <url>', 'the broker (default: mqtt.url of the config)')
    .option('--api <url>', 'the attendance service (default: api.url of the config)')
    .option('--prefix <prefix>', 'topic prefix of the terminals (default: mqtt.prefix of the config, attendance)')
    .option('--group <name>', 'shared subscription group: ingests with the same group share the messages', 'edge-agent-ingest')
    .option('--no-share', 'subscribe without a shared subscription (a broker without them; run one ingest only)')
    .option(
      '--mqtt-client-id <id>',
      "base of this process's MQTT client ids, <id>-0, <id>-1, ... (default ingest-<hostname>); unique per process, stable across restarts",
    )
    .option('--mqtt-version <v>', '5, 3.1.1 or auto (5, else 3.1.1)', 'auto')
    .option('--connections <n>', 'broker connections of this process (each a member of the group)', '4')
    .option(
      '--inflight <n>',
      'unacknowledged messages the broker may send each connection (MQTT 5 receive maximum; the broker may allow fewer: Mosquitto max_inflight_messages)',
      '500',
    )
    .option(
      '--keepalive <sec>',
      'MQTT keepalive; long, because a busy broker answers a ping only after the messages queued before it',
      '60',
    )
    .option(
      '--session-expiry <sec>',
      "how long the broker keeps this process's unacknowledged messages while it is away (0: not at all, for a broker that hands them to another member)",
      String(7 * 86_400),
    )
    .option('--batch-size <n>', 'events per request at most', '500')
    .option('--batch-wait-ms <ms>', 'how long a batch waits to fill', '20')
    .option('--dead-letter-topic <topic>', 'where refused events go (default <prefix>/ingest/dead-letters)')
    .option('--metrics-port <port>', 'port of GET /metrics and /health; 0 picks a free one', '9464')
    .option('--metrics-host <host>', 'address of the metrics port', '127.0.0.1')
    .option('--config <file>', 'config file to read api.* and mqtt.* from')
    .option('--secrets <file>', 'secrets file with the API key and secret and the MQTT credentials')
    .option('--client-id <id>', 'OAuth2 client id of the attendance service (default: api.clientId of the config)')
    .option('--api-key <key>', 'API key (an admin key: it adds events)')
    .option('--api-secret-file <file>', 'file holding the API secret')
    .option('--path-form <form>', 'API path form: api or attendance')
    .option('--log-level <level>', 'fatal, error, warn, info, debug, trace or silent')
    .option('--log-format <format>', 'json (for journald, the default) or pretty');
  return action<Values>(cmd, async (values) => {
    const { lookedAt, standaloneConfig, standaloneSecrets } = await import('../../config/standalone.js');
    const { applyLogging } = await import('../../config/logging.js');
    const { createAttendanceClient, mqttAccess } = await import('../../daemon/upstreams.js');
    const { Ingest, INGEST_DEFAULTS, defaultDeadLetterTopic } = await import('../../ingest/ingest.js');
    const flags = {
      ...(values.config ? { config: values.config } : {}),
      ...(values.mqtt ? { mqtt: values.mqtt } : {}),
      ...(values.api ? { api: values.api } : {}),
      ...(values.secrets ? { secrets: values.secrets } : {}),
      ...(values['client-id'] ? { 'client-id': values['client-id'] } : {}),
      ...(values['path-form'] ? { 'path-form': values['path-form'] } : {}),
      ...(values['log-level'] ? { 'log-level': values['log-level'] } : {}),
      ...(values['log-format'] ? { 'log-format': values['log-format'] } : {}),
      ...(values['api-key'] ? { 'api-key': values['api-key'] } : {}),
      ...(values['api-secret-file'] ? { 'api-secret-file': values['api-secret-file'] } : {}),
    };
    // A central host has no terminal's config: the broker, the API and its key on the command line
    // (or --secrets) are enough; a config fills in what they leave out (config/standalone.ts).
    const config = standaloneConfig(flags, process.env, {
      complete: Boolean(values.mqtt && values.api && ((values['api-key'] && values['api-secret-file']) || values.secrets)),
    });
    applyLogging(config.logging);
    if (!config.mqtt.url) throw missingFlag('ingest', '--mqtt URL', 'the broker the terminals publish to', lookedAt(config));
    if (!config.api.url) throw missingFlag('ingest', '--api URL', 'the attendance service', lookedAt(config));
    const secrets = standaloneSecrets(config, flags);
    const secretsWhere = config.secretsPath ? `neither the flags nor ${config.secretsPath} give it` : lookedAt(config);
    if (!secrets.apiKey) throw missingFlag('ingest', '--api-key KEY', 'an admin API key of the attendance service', secretsWhere);
    if (!secrets.apiSecret) throw missingFlag('ingest', '--api-secret-file FILE', "the file holding that API key's secret", secretsWhere);
    const version = values['mqtt-version'] ?? 'auto';
    if (!['5', '3.1.1', '4', 'auto'].includes(version)) throw usageError('ingest', `--mqtt-version is 5, 3.1.1 or auto, got "${version}"`);
    const positive = (name: string, v: string | undefined, fallback: number) => {
      const n = intFlag(name, v, fallback)!;
      if (n < 1) throw usageError('ingest', `--${name} must be at least 1, got ${n}`);
      return n;
    };
    const connections = positive('connections', values.connections, INGEST_DEFAULTS.connections);
    const metricsPort = intFlag('metrics-port', values['metrics-port'], 9464)!;
    if (metricsPort < 0 || metricsPort > 65535) throw usageError('ingest', `--metrics-port must be 0..65535, got ${metricsPort}`);
    const share = values.share !== false;
    if (!share && connections > 1)
      throw usageError('ingest', '--no-share takes one connection (each would get every message): add --connections 1');
    const sessionExpirySec = intFlag('session-expiry', values['session-expiry'], INGEST_DEFAULTS.sessionExpirySec)!;
    if (sessionExpirySec < 0 || sessionExpirySec > 0xffffffff)
      throw usageError('ingest', `--session-expiry is 0..4294967295 seconds, got ${sessionExpirySec}`);
    const prefix = values.prefix ?? config.mqtt.prefix;
    const ingest = new Ingest({
      url: config.mqtt.url,
      access: { ...mqttAccess(config, secrets), keepaliveSec: positive('keepalive', values.keepalive, 60) },
      prefix,
      group: share ? (values.group ?? INGEST_DEFAULTS.group) : null,
      clientId: values['mqtt-client-id'] ?? `ingest-${hostname()}`,
      connections,
      inflight: positive('inflight', values.inflight, INGEST_DEFAULTS.inflight),
      protocol: version === 'auto' ? 'auto' : version === '5' ? 5 : 4,
      sessionExpirySec,
      api: createAttendanceClient(config, secrets),
      batchSize: positive('batch-size', values['batch-size'], INGEST_DEFAULTS.batchSize),
      batchWaitMs: intFlag('batch-wait-ms', values['batch-wait-ms'], INGEST_DEFAULTS.batchWaitMs)!,
      maxBatchesInFlight: INGEST_DEFAULTS.maxBatchesInFlight,
      deadLetterTopic: values['dead-letter-topic'] ?? defaultDeadLetterTopic(prefix),
      dedupeSize: INGEST_DEFAULTS.dedupeSize,
      retryBaseMs: INGEST_DEFAULTS.retryBaseMs,
      retryCapMs: INGEST_DEFAULTS.retryCapMs,
      outOnlyRetries: INGEST_DEFAULTS.outOnlyRetries,
      outOnlyRetryMs: INGEST_DEFAULTS.outOnlyRetryMs,
      drainMs: INGEST_DEFAULTS.drainMs,
    });
    const metricsUrl = await ingest.listenMetrics(metricsPort, values['metrics-host'] ?? '127.0.0.1');
    try {
      await ingest.start();
    } catch (err) {
      await ingest.close();
      throw err;
    }
    process.stdout.write(
      `ingest: ${config.mqtt.url} -> ${config.api.url} (${connections} connections); metrics on ${metricsUrl}/metrics (SIGTERM stops)\n`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    process.stdout.write('stopping: draining what the broker already gave\n');
    await ingest.stop();
    return 0;
  });
}
