/**
 * The options every command that works on this terminal's setup shares (`run`, `punch`, `queue`,
 * `enroll`, ...): where the config and the data are, and the config keys a flag may override.
 *
 * Tested in test/integration/cli-management.test.ts (the configuration found or refused, the data
 * folder beside it) and test/unit/cli/main.test.ts (the flags each command lists).
 */
import { Option, type Command } from 'commander';
import { repeatable } from './command.js';
import type { COMMON_FLAGS, CommonFlagValues } from '../config/flags.js';

export type CommonValues = CommonFlagValues;
export interface ScannerValues {
  scanner?: string[];
  simulate?: boolean;
}

const COMMON_OPTIONS: Record<keyof typeof COMMON_FLAGS, [flags: string, description: string]> = {
  config: ['--config <file>', 'config file (YAML or JSON); default $EDGE_AGENT_CONFIG, else /etc/edge-agent/config.yaml'],
  data: ['--data <dir>', "data folder (database agent.db, secrets.yaml) instead of the config's dataDir"],
  terminal: ['--terminal <id>', 'terminal id'],
  site: ['--site <name>', 'site name'],
  mode: ['--mode <mode>', 'terminal mode: in, out or toggle'],
  api: ['--api <url>', 'attendance service base URL'],
  'client-id': ['--client-id <id>', 'OAuth2 client id'],
  'api-key': ['--api-key <key>', 'API key'],
  'api-secret-file': ['--api-secret-file <file>', 'file holding the API secret'],
  'path-form': ['--path-form <form>', 'API path form: api or attendance'],
  mqtt: ['--mqtt <url>', 'MQTT broker URL for monitoring (state, metrics, commands) and site sync; punches go there only with --upstream'],
  upstream: ['--upstream <list>', 'where punches are delivered: api, mqtt or api,mqtt (default: upstream of the config, else api)'],
  secrets: ['--secrets <file>', 'the secrets file (mode 0600) instead of the one the config names'],
  'log-level': ['--log-level <level>', 'fatal, error, warn, info, debug, trace or silent'],
  'log-format': ['--log-format <format>', 'json (for journald, the default) or pretty (for a person)'],
};

/** Adds the common options to `cmd`. */
export function withCommonOptions(cmd: Command): Command {
  for (const [flags, description] of Object.values(COMMON_OPTIONS))
    cmd.addOption(new Option(flags, description).helpGroup('Terminal setup (as for "edge-agent run"):'));
  return cmd;
}

/** `--scanner` (repeatable) and `--simulate`: the scanners of `run`, `enroll` and `identify`. */
export function withScannerOptions(cmd: Command): Command {
  return cmd
    .addOption(
      repeatable(
        '--scanner <family:path[:baud][:format]>',
        'a scanner (repeatable): r30x, gt521, iris-hid, badge-serial or badge-hid (format: a badge reader\'s em4100-dec, em4100-hex, wiegand26 or wiegand34); path "sim" for a simulator',
      ).helpGroup('Scanners:'),
    )
    .addOption(
      new Option('--simulate', 'simulated scanners (an R30x module and an iris camera) when none is given').helpGroup('Scanners:'),
    );
}
