/**
 * Loading the configuration. One file (YAML or JSON) read and checked for syntax, then the layers
 * in precedence, lowest first: defaults < file < environment (`env.ts`) < command-line flags,
 * validated against the schema (`config.ts`), a bad value named with where it came from.
 *
 * What the commands share to find the terminal's setup: the config by the one rule of
 * `locate.ts` (--config, $EDGE_AGENT_CONFIG, /etc/edge-agent/config.yaml, the demo's in a
 * checkout) with env and flags on top, secrets from the 0600 file (default
 * `<dataDir>/secrets.yaml`, or `$EDGE_AGENT_SECRETS`) and systemd credentials.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import YAML from 'yaml';
import { AgentError } from '../core/errors.js';
import { type AgentConfig, parseConfig } from './config.js';
import { configFromEnv, envName } from './env.js';
import { type CommonFlagValues, configFromFlags } from './flags.js';
import { CONFIG_ERROR_CODES, typeName } from './explain.js';
import { hasPath, isPlainObject, mergeConfig } from './layers.js';
import { defaultDataDir, locateConfig, noConfigError, type ConfigLocation } from './locate.js';
import { loadSecrets, type Secrets, secretsFilePath } from './secrets.js';

/** Reads a YAML or JSON file (YAML is a superset of JSON). */
export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why =
      e.code === 'ENOENT'
        ? 'it does not exist'
        : e.code === 'EACCES'
          ? 'permission denied'
          : e.code === 'EISDIR'
            ? 'it is a folder'
            : (e.code ?? e.message);
    throw new AgentError(
      CONFIG_ERROR_CODES.notFound,
      `cannot read config file ${file}: ${why}`,
      { file, key: '(file)' },
      { hint: 'pass the path of an existing file with --config, or create one with "edge-agent provision"', cause: err },
    );
  }
  let doc: unknown;
  try {
    doc = YAML.parse(text, { prettyErrors: true, uniqueKeys: true });
  } catch (err) {
    const e = err as { message: string; linePos?: Array<{ line: number; col: number }> };
    const pos = e.linePos?.[0];
    const where = pos ? ` at line ${pos.line}, column ${pos.col}` : '';
    throw new AgentError(
      CONFIG_ERROR_CODES.syntax,
      `config file ${file} is not valid YAML or JSON${where}: ${e.message.split('\n')[0]}`,
      { file, key: '(syntax)', line: pos?.line ?? null, column: pos?.col ?? null },
      { hint: `fix the syntax${where} of ${file}`, cause: err },
    );
  }
  if (doc === null || doc === undefined) return {};
  if (!isPlainObject(doc))
    throw new AgentError(
      CONFIG_ERROR_CODES.wrongType,
      `config file ${file} must hold a mapping of keys to values, not ${typeName(doc)}`,
      { file, key: '(root)', value: doc },
      { hint: 'start the file with keys such as "terminal:" and "api:"' },
    );
  return doc;
}

export interface LoadConfigOptions {
  file?: string | null;
  env?: NodeJS.ProcessEnv;
  /** Values from command-line flags (highest precedence). */
  overrides?: Record<string, unknown>;
}

/**
 * Defaults < file < environment < overrides, validated. The data folder comes from the file: a
 * relative `dataDir` (or `secretsFile`) there is relative to the file's folder, and a file that
 * names none gets `defaultDataDir(file)` (/var/lib/edge-agent for a config in /etc, else `data`
 * beside it), never a folder that depends on where the command runs. Relative paths from the
 * environment or flags resolve against the working folder.
 */
export function loadConfig(options: LoadConfigOptions = {}): AgentConfig & { source: string | null } {
  const env = options.env ?? process.env;
  const file = options.file || env.EDGE_AGENT_CONFIG || null;
  const fromFile: Record<string, unknown> = file ? readConfigFile(file) : {};
  if (file) {
    const folder = dirname(resolve(file));
    if (fromFile.dataDir === undefined) fromFile.dataDir = defaultDataDir(file);
    for (const key of ['dataDir', 'secretsFile'] as const) {
      const v = fromFile[key];
      if (typeof v === 'string' && v !== '' && !isAbsolute(v)) fromFile[key] = resolve(folder, v);
    }
  }
  const fromEnv = configFromEnv(env);
  let raw = mergeConfig(fromFile, fromEnv);
  if (options.overrides) raw = mergeConfig(raw, options.overrides);
  const origins = (key: string): string | undefined => {
    const top = key.split('.').slice(0, 2).join('.');
    if (options.overrides && hasPath(options.overrides, key)) return 'a command-line flag';
    if (hasPath(fromEnv, key))
      return `environment ${envName(
        key
          .split('.')
          .filter((p) => !/^\d+$/.test(p))
          .join('.'),
      )}`;
    if (hasPath(fromEnv, top) && !hasPath(fromFile, key)) return `environment ${envName(top)}`;
    return file ? `file ${file}` : undefined;
  };
  const config = parseConfig(raw, file ?? 'configuration', origins);
  config.dataDir = resolve(config.dataDir);
  if (config.secretsFile) config.secretsFile = resolve(config.secretsFile);
  return { ...config, source: file ? resolve(file) : null };
}

export type LoadedConfig = AgentConfig & { source: string | null; location: ConfigLocation };

export interface ConfigForFlagsOptions {
  /**
   * Refuse (`CONFIG_NONE`, naming where it looked) when no config file is found: every command
   * that records or reads punches or templates. Default true.
   */
  require?: boolean;
  /** The command, for the refusal: `edge-agent punch`. */
  command?: string;
  /** Where the demo note goes (default stderr); commands print it so a person sees which config runs. */
  say?: (line: string) => void;
}

export function configForFlags(
  values: CommonFlagValues,
  env: NodeJS.ProcessEnv = process.env,
  options: ConfigForFlagsOptions = {},
): LoadedConfig {
  const location = locateConfig(values.config, env);
  if (!location.file && options.require !== false) throw noConfigError(location, options.command);
  if (location.note) (options.say ?? ((line: string) => process.stderr.write(`${line}\n`)))(location.note);
  return { ...loadConfig({ file: location.file, env, overrides: configFromFlags(values) }), location };
}

export function secretsFor(config: AgentConfig, values: CommonFlagValues, env: NodeJS.ProcessEnv = process.env): Secrets {
  return loadSecrets({
    // secretsFile from the config (provision writes it; $EDGE_AGENT_SECRETS overrides), else <dataDir>/secrets.yaml
    file: env.EDGE_AGENT_SECRETS ?? secretsFilePath(config),
    apiSecretFile: values['api-secret-file'] ?? null,
    apiKey: values['api-key'] ?? null,
  });
}
