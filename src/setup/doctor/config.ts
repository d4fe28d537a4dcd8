/**
 * The config check: the configuration found by the one rule (`locateConfig`) loads and validates;
 * a mistake is named with its key, and none found says where the rule looked.
 */
import type { AgentConfig } from '../../config/config.js';
import { loadConfig, type LoadConfigOptions } from '../../config/load.js';
import { noConfigError, type ConfigLocation } from '../../config/locate.js';
import { isAgentError } from '../../core/errors.js';
import { type CheckResult, fail, fromError, pass } from './check.js';

export function checkConfig(
  options: LoadConfigOptions,
  location?: ConfigLocation,
): { result: CheckResult; config: (AgentConfig & { source: string | null }) | null } {
  if (location && !location.file) {
    return {
      result: fail('config', `no configuration found; looked at: ${location.looked.join(', ')}`, noConfigError(location).hint!),
      config: null,
    };
  }
  try {
    const config = loadConfig(options);
    const whose = location?.origin === 'demo' ? " (the embedded demo's: no other configuration was found)" : '';
    return {
      result: pass(
        'config',
        `${config.source ?? 'defaults and environment'}${whose} is valid (configVersion ${config.configVersion}, terminal ${config.terminal.id} at ${config.terminal.site}, data ${config.dataDir})`,
      ),
      config,
    };
  } catch (err) {
    const r = fromError('config', err, 'fix the config file or run "edge-agent provision"');
    if (isAgentError(err) && typeof err.context.key === 'string') r.detail += ` [key: ${err.context.key}]`;
    return { result: r, config: null };
  }
}
