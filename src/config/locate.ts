/**
 * One rule to find the terminal's configuration, the same for every command and the service:
 *
 *   1. `--config FILE`;
 *   2. `$EDGE_AGENT_CONFIG` (what the systemd unit sets);
 *   3. `/etc/edge-agent/config.yaml` when it exists (what `install-service` and `provision` make);
 *   4. only in a checkout of the sources: the embedded demo's config (`data/embedded-config.yaml`,
 *      written by `npm start`), and the command says so.
 *
 * A command that records or reads punches refuses to start when none is found, naming where it
 * looked: it never falls back to a `./data` of whatever folder it runs in.
 *
 * Test seams (never configuration keys): `EDGE_AGENT_TEST_INSTALLED_CONFIG` replaces the path of
 * step 3, `EDGE_AGENT_TEST_DEMO_CONFIG` the path of step 4 (empty: not a checkout).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentError } from '../core/errors.js';

export const INSTALLED_CONFIG = '/etc/edge-agent/config.yaml';

export type ConfigOrigin = 'flag' | 'env' | 'installed' | 'demo';

export interface ConfigLocation {
  /** The file found, or null when none was. */
  file: string | null;
  origin: ConfigOrigin | null;
  /** Every place looked at, in order, with what was found there (for the refusal and doctor). */
  looked: string[];
  /** A sentence the command prints on stderr when the file is not the obvious one (the demo's). */
  note: string | null;
}

/** The folder holding this copy's package.json (the checkout or the installed package). */
export function packageRoot(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  return null;
}

/** True when this copy runs from a checkout of the sources (a .git beside package.json), not an install. */
export function isCheckout(): boolean {
  const root = packageRoot();
  return root !== null && existsSync(join(root, '.git'));
}

/** The embedded demo's config of this checkout, or null when this copy is not a checkout (no .git). */
export function demoConfigPath(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.EDGE_AGENT_TEST_DEMO_CONFIG !== undefined) return env.EDGE_AGENT_TEST_DEMO_CONFIG || null;
  return isCheckout() ? join(packageRoot()!, 'data', 'embedded-config.yaml') : null;
}

export function installedConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.EDGE_AGENT_TEST_INSTALLED_CONFIG || INSTALLED_CONFIG;
}

/** Applies the rule; finds nothing rather than guessing. */
export function locateConfig(flag: string | null | undefined, env: NodeJS.ProcessEnv = process.env): ConfigLocation {
  const looked: string[] = [];
  if (flag) return { file: flag, origin: 'flag', looked: [`--config ${flag}`], note: null };
  looked.push('--config (not given)');
  if (env.EDGE_AGENT_CONFIG)
    return { file: env.EDGE_AGENT_CONFIG, origin: 'env', looked: [...looked, `$EDGE_AGENT_CONFIG=${env.EDGE_AGENT_CONFIG}`], note: null };
  looked.push('$EDGE_AGENT_CONFIG (not set)');
  const installed = installedConfigPath(env);
  if (existsSync(installed)) return { file: installed, origin: 'installed', looked: [...looked, installed], note: null };
  looked.push(`${installed} (does not exist)`);
  const demo = demoConfigPath(env);
  if (demo && existsSync(demo)) {
    return {
      file: demo,
      origin: 'demo',
      looked: [...looked, demo],
      note: `no configuration given: using the embedded demo's ${demo} (in a checkout only; "npm start" writes it). Pass --config FILE for another.`,
    };
  }
  looked.push(demo ? `${demo} (the embedded demo's; "npm start" writes it)` : "the embedded demo's config (only in a checkout)");
  return { file: null, origin: null, looked, note: null };
}

/** The refusal of a command that needs a configuration and found none. */
export function noConfigError(location: ConfigLocation, command = 'this command'): AgentError {
  return new AgentError(
    'CONFIG_NONE',
    `${command} needs this terminal's configuration and found none; looked at: ${location.looked.join(', ')}`,
    { looked: location.looked },
    {
      hint: `pass --config FILE or set EDGE_AGENT_CONFIG, or set the terminal up with "edge-agent provision" (writes ${INSTALLED_CONFIG}); nothing was recorded or read`,
    },
  );
}

/** Where the data folder goes when the config names none: /var/lib/edge-agent for a config in /etc, else `data` next to the config. */
export function defaultDataDir(configFile: string | null | undefined): string {
  if (!configFile) return resolve('./data');
  const abs = resolve(configFile);
  return abs.startsWith('/etc/') ? '/var/lib/edge-agent' : join(dirname(abs), 'data');
}
