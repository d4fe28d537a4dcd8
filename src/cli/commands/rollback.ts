/**
 * Tested in test/integration/rollback-cli.test.ts (back to the previous release and forward again)
 * and test/integration/release-deb.test.ts.
 */
import type { Command } from 'commander';
import { action, defineCommand, printJson, withJson } from '../command.js';

type Values = { prefix?: string; 'dry-run'?: boolean; restart?: boolean; json?: boolean };

export default function register(program: Command): Command {
  const cmd = defineCommand(program, {
    name: 'rollback',
    summary: 'go back to the previously installed release (and restart the service)',
    audience: 'technician',
    details: `Swaps /opt/edge-agent/current and /opt/edge-agent/previous, which the .deb and
"edge-agent install-service" (from a release tarball) keep, then restarts edge-agent if it runs.
Run it again to go forward. Like an install, it checks that the release's unix-dgram addon loads
with this node and writes or removes the NotifyAccess=all drop-in accordingly (edge-agent.service.d/
notify-access.conf). Database migrations only go forward: if the newer release migrated
the database, the older one refuses to start (STORE_SCHEMA_TOO_NEW in journalctl -u edge-agent);
roll forward again then.`,
  })
    .option('--prefix <dir>', 'the installation root (default /)')
    .option('--dry-run', 'print what would be done, change nothing')
    .option('--no-restart', 'switch the release only; restart the service yourself');
  withJson(cmd);
  return action<Values>(cmd, async (values) => {
    const { releaseLinks, rollbackRelease } = await import('../../setup/releases.js');
    const { run } = await import('../../setup/service-files.js');
    const { notifyAccessStep } = await import('../../setup/service-files/notify-access.js');
    const { join, resolve } = await import('node:path');
    const { existsSync } = await import('node:fs');
    const root = resolve(values.prefix ?? '/');
    const dryRun = values['dry-run'] ?? false;
    const { from, to, steps } = rollbackRelease(root, dryRun);
    // The release gone back to may carry an addon that does not load (one built before it was
    // shipped, or for another Node): the unit's NotifyAccess= follows, as on install.
    const notify = notifyAccessStep(
      root,
      join(releaseLinks(root).home, 'releases', to, 'node_modules/unix-dgram'),
      process.execPath,
      dryRun,
    );
    steps.push(notify);
    const args = ['try-restart', 'edge-agent.service'];
    if (values.restart === false || root !== '/' || !existsSync('/run/systemd/system')) {
      steps.push({
        action: 'restart the service',
        status: 'skipped',
        detail: values.restart === false ? '--no-restart: systemctl restart edge-agent when ready' : 'no running systemd here',
      });
    } else if (dryRun) {
      steps.push({ action: 'restart the service', status: 'would do', detail: `systemctl ${args.join(' ')}` });
    } else {
      if (notify.status === 'done') run('systemctl', ['daemon-reload']);
      const r = run('systemctl', args);
      steps.push({
        action: 'restart the service',
        status: r.ok ? 'done' : 'failed',
        detail: r.ok ? `systemctl ${args.join(' ')}` : r.out.split('\n')[0],
      });
    }
    const ok = steps.every((s) => s.status !== 'failed');
    if (values.json) printJson({ ok, from, to, steps });
    else {
      for (const s of steps)
        process.stdout.write(
          `${s.status.padEnd(9)} ${s.action}${s.path ? ` ${s.path}` : ''}${s.detail ? `\n          ${s.detail}` : ''}\n`,
        );
      process.stdout.write(`\nedge-agent ${to} is current; "edge-agent rollback" again returns to ${from}.\n`);
    }
    return ok ? 0 : 1;
  });
}
