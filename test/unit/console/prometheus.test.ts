import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { ConsoleMetrics, TERMINAL_FAMILIES } from '../../../src/console/prometheus.js';
import { fleetRow, parseInfo, parseMetrics } from '../../../src/ops/fleet-row.js';
import { parsePrometheusText } from '../../helpers/prometheus.js';
import { ROOT } from '../../helpers/cli.js';

const NOW = Date.parse('2026-03-02T08:00:00.000Z');
const health = {
  startedAt: NOW - 60_000,
  mqttConnected: true,
  messages: 10,
  dropped: 1,
  sseClients: 2,
  alertPublishes: 3,
  httpRequests: 4,
  commandsSent: 0,
};

function terminal(site: string, name: string, state: string | null, metrics: Record<string, unknown> | null) {
  return {
    row: fleetRow(site, name, state, parseInfo({ version: '1.0.0' }), metrics && parseMetrics(metrics)),
    stateSince: NOW - 30_000,
    alerts: 0,
  };
}

describe('/metrics', () => {
  it("parses as Prometheus text, with a series per terminal and metric and the console's health", async () => {
    const text = await new ConsoleMetrics().render(
      [
        terminal('plant-a', 'gate-1', 'online', {
          at: '2026-03-02T07:59:59.000Z',
          queue: { pending: 2, dead: 1, delivered: 5, oldestPendingAgeSec: 40 },
          identification: { p95Ms: 20 },
          capture: { punched: 9, hostPathP95Ms: 300 },
          clock: { clockTrusted: true },
          system: { cpuTempC: 55.5, freeDiskMb: 100, rssMb: 90 },
          scanners: [{ key: 'k', status: 'ready' }],
        }),
        terminal('plant-b', 'door "1"\\x', 'lost', { queue: { pending: 0, dead: 0 } }),
      ],
      health,
      [],
      NOW,
    );
    const families = parsePrometheusText(text);
    const series = (name: string) => families.get(name)!.samples;
    expect(series('edge_agent_terminal_up').map((s) => [s.labels.terminal, s.value])).toEqual([
      ['gate-1', 1],
      ['door "1"\\x', 0],
    ]);
    expect(series('edge_agent_terminal_state').map((s) => s.labels.state)).toEqual(['online', 'lost']);
    expect(series('edge_agent_queue_pending').map((s) => s.value)).toEqual([2, 0]);
    // nothing pending: 0, so the series exists for an alert rule
    expect(series('edge_agent_queue_oldest_pending_seconds').map((s) => s.value)).toEqual([40, 0]);
    expect(series('edge_agent_identification_p95_seconds')).toEqual([
      { name: 'edge_agent_identification_p95_seconds', labels: { site: 'plant-a', terminal: 'gate-1' }, value: 0.02 },
    ]);
    expect(series('edge_agent_capture_to_punch_p95_seconds')[0]!.value).toBe(0.3);
    expect(series('edge_agent_free_disk_bytes')[0]!.value).toBe(100 * 1048576);
    expect(series('edge_agent_terminal_state_seconds')[0]!.value).toBe(30);
    expect(families.get('edge_agent_punches_total')!.type).toBe('counter');
    expect(series('edge_agent_console_up')[0]!.value).toBe(1);
    expect(series('edge_agent_console_terminals')[0]!.value).toBe(2);
    expect(series('edge_agent_console_mqtt_connected')[0]!.value).toBe(1);
    for (const f of TERMINAL_FAMILIES) expect(families.get(f.name)?.help, f.name).toBeTruthy();
  });

  it('escapes label values as the format wants (prom-client writes them)', async () => {
    const text = await new ConsoleMetrics().render([terminal('plant-c', 'a"b\\c\nd', 'online', null)], health, [], NOW);
    expect(text).toContain('edge_agent_terminal_up{site="plant-c",terminal="a\\"b\\\\c\\nd"} 1\n');
    expect(parsePrometheusText(text).get('edge_agent_terminal_up')!.samples[0]!.labels.terminal).toBe('a"b\\c\nd');
  });

  it('keeps one registry per console, each scrape with the figures of its moment', async () => {
    const metrics = new ConsoleMetrics();
    const first = parsePrometheusText(await metrics.render([terminal('s', 't1', 'online', null)], health, [], NOW));
    const second = parsePrometheusText(await metrics.render([terminal('s', 't2', 'lost', null)], { ...health, messages: 11 }, [], NOW));
    expect(first.get('edge_agent_terminal_up')!.samples.map((s) => s.labels.terminal)).toEqual(['t1']);
    expect(second.get('edge_agent_terminal_up')!.samples.map((s) => [s.labels.terminal, s.value])).toEqual([['t2', 0]]);
    expect(second.get('edge_agent_console_mqtt_messages_total')!.samples[0]!.value).toBe(11);
    expect(metrics.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('the test parser refuses what Prometheus would refuse', () => {
    expect(() => parsePrometheusText('x 1')).toThrow(/newline/);
    expect(() => parsePrometheusText('x{a="1"} 1\nx{a="1"} 2\n')).toThrow(/twice/);
    expect(() => parsePrometheusText('x{a="\\t"} 1\n')).toThrow(/escape/);
    expect(() => parsePrometheusText('x 1\ny 1\nx{b="2"} 1\n')).toThrow(/again/);
    expect(() => parsePrometheusText('x one\n')).toThrow(/number/);
    expect(() => parsePrometheusText('x 1\n# TYPE x gauge\n')).toThrow(/TYPE after/);
    expect(() => parsePrometheusText('9x 1\n')).toThrow(/not a sample/);
    expect(parsePrometheusText('# TYPE x gauge\nx{a="q\\"",b="\\\\"} +Inf\n').get('x')!.samples[0]).toEqual({
      name: 'x',
      labels: { a: 'q"', b: '\\' },
      value: Infinity,
    });
  });
});

describe('the Grafana dashboard and the alerting rules in docs/', () => {
  /** The metric names a PromQL expression uses (label values and functions left out). */
  const metricsOf = (expr: string) => [...expr.replace(/"[^"]*"/g, '""').matchAll(/\b(edge_agent_[a-z0-9_]+)\b/g)].map((m) => m[1]!);
  it('use only metrics the console serves', async () => {
    const served = new Set(parsePrometheusText(await new ConsoleMetrics().render([], health, [], NOW)).keys());
    const dashboard = JSON.parse(readFileSync(`${ROOT}docs/console-grafana-dashboard.json`, 'utf8')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
      templating: { list: Array<{ query: string }> };
    };
    const exprs = [...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr)), ...dashboard.templating.list.map((v) => v.query)];
    const rules = (
      YAML.parse(readFileSync(`${ROOT}docs/console-alert-rules.yml`, 'utf8')) as {
        groups: Array<{ rules: Array<{ alert: string; expr: string; labels: { severity: string } }> }>;
      }
    ).groups.flatMap((g) => g.rules);
    expect(dashboard.panels.length).toBeGreaterThan(8);
    expect(rules.map((r) => r.alert)).toEqual(
      expect.arrayContaining([
        'EdgeAgentTerminalLost',
        'EdgeAgentOldestPendingPunch',
        'EdgeAgentDeadLetters',
        'EdgeAgentClockUnsynchronized',
        'EdgeAgentDiskLow',
        'EdgeAgentTemperatureHigh',
      ]),
    );
    for (const r of rules) expect(['critical', 'warning'], r.alert).toContain(r.labels.severity);
    const used = [...exprs, ...rules.map((r) => r.expr)].flatMap(metricsOf);
    expect(used.length).toBeGreaterThan(20);
    for (const name of used) expect(served, name).toContain(name);
  });
});
