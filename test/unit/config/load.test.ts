import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFromFlags } from '../../../src/config/flags.js';
import { loadConfig, readConfigFile } from '../../../src/config/load.js';
import { configFiles, failure } from '../../helpers/config.js';

const { dir, file } = configFiles('load-test-');

describe('load: the layers', () => {
  it('reads JSON as well as YAML', () => {
    const c = loadConfig({ file: file('{"terminal": {"id": "gate-7"}}', 'json'), env: {} });
    expect(c.terminal.id).toBe('gate-7');
  });

  it('applies defaults < file < environment < flags', () => {
    const f = file('terminal:\n  id: from-file\n  site: s1\napi:\n  pathForm: attendance\n');
    const env = { EDGE_AGENT_TERMINAL__ID: 'from-env', EDGE_AGENT_API__PATH_FORM: 'api', EDGE_AGENT_OUTBOX__BATCH_SIZE: '50' };
    const c = loadConfig({ file: f, env, overrides: configFromFlags({ terminal: 'from-flag' }) });
    expect(c.terminal.id).toBe('from-flag');
    expect(c.terminal.site).toBe('s1');
    expect(c.api.pathForm).toBe('api');
    expect(c.outbox.batchSize).toBe(50);
  });

  it('resolves a relative dataDir and secretsFile against the file, and names a data folder when the file has none', () => {
    const c = loadConfig({ file: file('dataDir: ./here\nsecretsFile: s/secrets.yaml\n'), env: {} });
    expect(c.dataDir).toBe(join(dir, 'here'));
    expect(c.secretsFile).toBe(join(dir, 's', 'secrets.yaml'));
    const f = file('');
    expect(loadConfig({ file: f, env: {} })).toMatchObject({ dataDir: join(dir, 'data'), source: f });
  });

  it('reads an empty file as no keys', () => {
    expect(readConfigFile(file(''))).toEqual({});
  });
});

describe('load: the file and where a value came from', () => {
  it('syntax error with line and column', () => {
    const e = failure(() => loadConfig({ file: file('terminal:\n  id: gate-1\n   site: [x\n'), env: {} }));
    expect(e.code).toBe('CONFIG_SYNTAX');
    expect(e.context.line).toBeTypeOf('number');
    expect(e.context.column).toBeTypeOf('number');
    expect(e.message).toMatch(/at line \d+, column \d+/);
  });

  it('duplicate key is a syntax error', () => {
    const e = failure(() => loadConfig({ file: file('terminal:\n  id: a\n  id: b\n'), env: {} }));
    expect(e.code).toBe('CONFIG_SYNTAX');
  });

  it('missing file', () => {
    const e = failure(() => loadConfig({ file: join(dir, 'nope.yaml'), env: {} }));
    expect(e.code).toBe('CONFIG_NOT_FOUND');
    expect(e.message).toContain('does not exist');
    expect(e.hint).toContain('edge-agent provision');
  });

  it('a file that is not a mapping', () => {
    const e = failure(() => loadConfig({ file: file('- a\n- b\n'), env: {} }));
    expect(e.code).toBe('CONFIG_WRONG_TYPE');
  });

  it('says when the bad value came from the environment', () => {
    const e = failure(() => loadConfig({ file: file('terminal:\n  mode: in\n'), env: { EDGE_AGENT_TERMINAL__MODE: 'both' } }));
    expect(e.code).toBe('CONFIG_BAD_ENUM');
    expect(e.context.origin).toBe('environment EDGE_AGENT_TERMINAL__MODE');
    expect(e.hint).toContain('EDGE_AGENT_TERMINAL__MODE');
  });

  it('says when the bad value came from a flag, or from the file', () => {
    const f = file('terminal:\n  mode: sideways\n');
    expect(failure(() => loadConfig({ file: f, env: {} })).context.origin).toBe(`file ${f}`);
    const e = failure(() => loadConfig({ file: file(''), env: {}, overrides: configFromFlags({ mode: 'sideways' }) }));
    expect(e.context.origin).toBe('a command-line flag');
  });
});
