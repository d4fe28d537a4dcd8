/**
 * The layers of ../shared/ARCHITECTURE.md as rules: imports point down only, no cycles.
 * `npm run lint:deps` (part of `npm test`) fails on any violation.
 *
 * From the top (the layer that may import the most) down: cli > embedded > setup > daemon >
 * terminal > console > ops, site-sync > ingest > upload > synthetic > store > server > config >
 * biometrics > api > drivers > core, the order of the layer tables in README.md and
 * docs/architecture.md (test/unit/docs-layer-order.test.ts). `server` (the attendance service)
 * shares only api and core with the agent. `ingest` (the central MQTT consumer) sits beside ops:
 * it uses delivery's API batch rules and MQTT options, the config types, the API client and core.
 * `console` (the operations console's web server) sits above ops: it reads the fleet over MQTT
 * and signs commands; only the CLI starts it. `synthetic` (seeded fake fingers and eyes) is for
 * the wiring of simulators, tests and benchmarks: never imported by drivers or the product's
 * biometrics.
 */
const only = (name, from, allowed, comment) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: { path: '^(src|drivers)/', pathNot: [`^(${allowed.join('|')})/`] },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'a cycle makes two modules one: split the shared part out or invert it with an interface', from: {}, to: { circular: true } },
    only('core-is-the-bottom', '^src/core/', ['src/core'], 'src/core is the shared kernel: it imports nothing of ours'),
    only('drivers-know-only-core', '^drivers/', ['drivers', 'src/core'], 'drivers/ is reusable hardware code: images for simulators are injected (src/synthetic/simulator-sources.ts)'),
    only('api-is-the-contract', '^src/api/', ['src/api', 'src/core'], 'the API contract depends on nothing above it'),
    only('server-shares-only-the-contract', '^src/server/', ['src/server', 'src/api', 'src/core'], 'the attendance service never depends on agent code'),
    only('store-below-the-agent', '^src/store/', ['src/store', 'src/api', 'src/core'], 'persistence knows no network and no agent layer'),
    only('biometrics-are-pure', '^src/biometrics/', ['src/biometrics', 'src/core'], 'biometrics: codecs, extraction, matchers; no I/O beyond models, no synthetic data'),
    only('synthetic-on-biometrics', '^src/synthetic/', ['src/synthetic', 'src/biometrics', 'src/core', 'drivers'], 'synthetic data may use the codecs and the simulators\' image types'),
    only('config-below-the-agent', '^src/config/', ['src/config', 'src/core'], 'configuration knows nothing of what it configures'),
    only('upload-below-ops', '^src/upload/', ['src/upload', 'src/config', 'src/store', 'src/api', 'src/core'], 'delivery drains the outbox; it does not know ops, the terminal or the daemon'),
    only('ingest-beside-ops', '^src/ingest/', ['src/ingest', 'src/upload', 'src/config', 'src/api', 'src/core'], 'the central ingest talks MQTT and the attendance API; it knows no terminal, daemon or service internals'),
    only('ops-below-the-terminal', '^src/(ops|site-sync)/', ['src/ops', 'src/site-sync', 'src/upload', 'src/config', 'src/store', 'src/api', 'src/core'], 'ops and site sync talk MQTT; they never reach scanners or the daemon'),
    only('console-above-ops', '^src/console/', ['src/console', 'src/ops', 'src/upload', 'src/config', 'src/api', 'src/core'], 'the console watches and commands terminals over MQTT (ops); it never reaches the daemon, a terminal\'s store or scanners'),
    {
      name: 'console-only-for-the-cli',
      severity: 'error',
      comment: 'the operations console is a program of its own: only its CLI command starts it',
      from: { path: '^src/', pathNot: '^src/(console|cli)/' },
      to: { path: '^src/console/' },
    },
    only('terminal-knows-no-network', '^src/terminal/', ['src/terminal', 'src/config', 'src/biometrics', 'src/store', 'src/api', 'drivers', 'src/core'], 'the terminal domain never knows MQTT or HTTP transports (the API contract\'s types are allowed)'),
    only('daemon-below-setup', '^src/daemon/', ['src/daemon', 'src/terminal', 'src/ops', 'src/site-sync', 'src/upload', 'src/config', 'src/biometrics', 'src/synthetic', 'src/store', 'src/api', 'drivers', 'src/core'], 'the daemon wires the layers below it'),
    only('setup-below-the-demo', '^src/setup/', ['src/setup', 'src/daemon', 'src/terminal', 'src/ops', 'src/site-sync', 'src/upload', 'src/config', 'src/biometrics', 'src/synthetic', 'src/store', 'src/api', 'drivers', 'src/core'], 'field setup never imports the demo or the CLI'),
    only('demo-below-the-cli', '^src/embedded/', ['src/embedded', 'src/setup', 'src/daemon', 'src/terminal', 'src/ops', 'src/site-sync', 'src/upload', 'src/config', 'src/biometrics', 'src/synthetic', 'src/store', 'src/api', 'src/server', 'drivers', 'src/core'], 'the embedded demo is the only place the agent meets src/server'),
    {
      name: 'server-only-for-the-demo-and-cli',
      severity: 'error',
      comment: 'only the embedded demo and the CLI start the attendance service',
      from: { path: '^src/', pathNot: '^src/(server|embedded|cli)/' },
      to: { path: '^src/server/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(test|models/build)/' },
  },
};
