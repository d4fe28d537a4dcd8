/**
 * Vitest reporter (beside the default one): the fidelity tiers in the summary. It lists every
 * suite that was skipped, with its reason (the suite's name says `(needs socat)`), and the number
 * of tests in it. With `EDGE_AGENT_TEST_NO_SKIPS=1` (the full CI leg, where every program is
 * installed) a skipped test fails the run.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class TierReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const skipped = new Map<string, number>();
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        if (t.result().state !== 'skipped') continue;
        const where = `${m.relativeModuleId} > ${t.parent.type === 'module' ? t.name : t.parent.fullName}`;
        skipped.set(where, (skipped.get(where) ?? 0) + 1);
      }
    }
    if (skipped.size === 0) return;
    const total = [...skipped.values()].reduce((a, b) => a + b, 0);
    const lines = [...skipped].map(([where, n]) => `  ${where} (${n} test${n === 1 ? '' : 's'})`);
    const strict = process.env.EDGE_AGENT_TEST_NO_SKIPS === '1';
    const head = strict
      ? `FAIL: ${total} skipped test(s), and EDGE_AGENT_TEST_NO_SKIPS=1 wants none (install what they need):`
      : `Skipped ${total} test(s): this machine lacks what they need (see "needs" in each name):`;
    process.stdout.write(`\n${head}\n${lines.join('\n')}\n`);
    if (strict) process.exitCode = 1;
  }
}
