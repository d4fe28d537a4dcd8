/**
 * The command lines that run the daemon: the unit's ExecStart (this copy of the agent, or the
 * installed release that is current) with the daemon's node flags and environment, and the
 * `edge-agent` command script of an installed release (the .deb's /usr/bin/edge-agent,
 * install-service's /usr/local/bin/edge-agent).
 *
 * Tested in test/integration/systemd-unit.test.ts (the daemon's node flags and environment in the unit;
 * the ExecStart of this checkout passes systemd-analyze verify) and test/unit/setup/releases.test.ts
 * (the command script and the ExecStart of an installed release, through install-service).
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { RELEASES_HOME } from '../releases.js';

/**
 * Node flags of the daemon (npm run bench:scale measures them). Flags must be on node's command
 * line: V8 sizes its heap at start, and NODE_OPTIONS refuses the second one.
 * - `--max-semi-space-size=4`: V8 lets the young generation grow to 3 × 16 MB under a high
 *   allocation rate (draining a backlog): on a small board that is a fifth of the agent's memory
 *   for little speed.
 * - `--heap-growing-percent=20`: after each full collection the old generation may grow by 20 %
 *   before the next one, instead of up to 2-4 × what was live. Draining a million punches, the
 *   garbage of the batches in flight otherwise piled up to a 76 MB heap (RSS peaks of 160 MB);
 *   with it the heap stays under 30 MB and the RSS near 110 MB, at the same drain rate.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=4', '--heap-growing-percent=20'];

/**
 * Environment of the daemon (Environment= lines of the unit). glibc raises its mmap threshold
 * each time a large block is freed, after which large blocks come from the heap and their memory
 * stays with the process once freed: after the index snapshot is read in 64 KB slices, a terminal
 * held 10-25 MB more for good, depending on the order of frees. A fixed threshold returns such
 * blocks to the system when they are freed.
 */
export const DAEMON_ENVIRONMENT: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '65536' };

/** The command line that runs this copy of the agent: `node DAEMON_NODE_FLAGS [--import tsx] ENTRY run`. */
export function defaultExecStart(entry = process.argv[1] ?? ''): string {
  const parts = [process.execPath, ...DAEMON_NODE_FLAGS];
  if (entry.endsWith('.ts')) {
    // Running from the sources: tsx compiles on the fly (an installed package runs dist/*.js).
    parts.push('--import', createRequire(import.meta.url).resolve('tsx'));
  }
  parts.push(resolve(entry), 'run');
  return parts.join(' ');
}

/** The entry point of the current release, as the unit and the command link name it. */
export const CURRENT_ENTRY = `/${RELEASES_HOME}/current/dist/src/cli/main.js`;

/** The command line that runs whichever release is current (an installed release), with DAEMON_NODE_FLAGS. */
export function releaseExecStart(node = process.execPath): string {
  return [node, ...DAEMON_NODE_FLAGS, CURRENT_ENTRY, 'run'].join(' ');
}

/** The terminal's config file, the one provision writes and the service runs with. */
export const TERMINAL_CONFIG = '/etc/edge-agent/config.yaml';

/**
 * The `edge-agent` command of an installed release (/usr/bin/edge-agent from the package,
 * /usr/local/bin/edge-agent from install-service): runs the current release and, when no config
 * is named, the terminal's own once it exists, so "sudo edge-agent queue status" looks at the
 * service's outbox, not at ./data.
 */
export function commandScript(node = process.execPath): string {
  return `#!/bin/sh
# edge-agent: the current release (${`/${RELEASES_HOME}/current`}); written by the edge-agent package or install-service.
if [ -z "\${EDGE_AGENT_CONFIG:-}" ] && [ -f ${TERMINAL_CONFIG} ]; then
  EDGE_AGENT_CONFIG=${TERMINAL_CONFIG}
  export EDGE_AGENT_CONFIG
fi
exec ${node} ${CURRENT_ENTRY} "$@"
`;
}
