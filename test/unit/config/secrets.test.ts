import { chmodSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  emptySecrets,
  generateKey,
  loadSecrets,
  maskSecret,
  parseKey,
  secretsFilePath,
  secretValues,
  writeSecrets,
} from '../../../src/config/secrets.js';
import { failure } from '../../helpers/config.js';

const dir = mkdtempSync(join(tmpdir(), 'secrets-test-'));

describe('secrets', () => {
  it('writes a 0600 file atomically and reads it back', () => {
    const file = join(dir, 'a', 'secrets.yaml');
    const templateKey = generateKey();
    writeSecrets(file, { ...emptySecrets(), apiKey: 'key-1', apiSecret: 's3cr3t-value', templateKey, siteKey: null });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir, 'a'))).toEqual(['secrets.yaml']); // no temporary file left behind
    const s = loadSecrets({ file, credentialsDir: null });
    expect(s.apiKey).toBe('key-1');
    expect(s.apiSecret).toBe('s3cr3t-value');
    expect(s.templateKey?.equals(templateKey)).toBe(true);
    expect(s.siteKey).toBeNull();
    expect(s.sources.apiSecret).toBe(file);
    expect(readFileSync(file, 'utf8')).not.toContain('siteKey');
  });

  it('refuses a secrets file readable by others, naming the chmod', () => {
    const file = join(dir, 'open.yaml');
    writeFileSync(file, 'apiKey: k\n');
    chmodSync(file, 0o644);
    const e = failure(() => loadSecrets({ file, credentialsDir: null }));
    expect(e.code).toBe('SECRETS_PERMISSIONS');
    expect(e.hint).toBe(`run: chmod 600 ${file}`);
  });

  it('names an unknown key and a bad key', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'apikey: k\n', { mode: 0o600 });
    expect(failure(() => loadSecrets({ file, credentialsDir: null })).code).toBe('SECRETS_UNKNOWN_KEY');
    expect(failure(() => parseKey('abc', 'templateKey')).code).toBe('SECRETS_BAD_KEY');
    expect(parseKey('11'.repeat(32), 'k').length).toBe(32);
  });

  it('takes systemd credentials over the file, and --api-secret-file over both', () => {
    const file = join(dir, 'c.yaml');
    writeFileSync(file, 'apiKey: from-file\napiSecret: from-file\n', { mode: 0o600 });
    const cred = join(dir, 'creds');
    mkdirSync(cred);
    writeFileSync(join(cred, 'api-secret'), 'from-credential\n');
    writeFileSync(join(cred, 'template-key'), '22'.repeat(32));
    const s = loadSecrets({ file, credentialsDir: cred });
    expect(s.apiKey).toBe('from-file');
    expect(s.apiSecret).toBe('from-credential');
    expect(s.sources.apiSecret).toBe('credential:api-secret');
    expect(s.templateKey?.toString('hex')).toBe('22'.repeat(32));
    const only = join(dir, 'only-secret');
    writeFileSync(only, 'from-secret-file\n', { mode: 0o600 });
    expect(loadSecrets({ file, credentialsDir: cred, apiSecretFile: only }).apiSecret).toBe('from-secret-file');
  });

  it('masks values and lists them for leak checks', () => {
    expect(maskSecret('abcdef')).toBe('set (6 characters)');
    expect(maskSecret(Buffer.alloc(32))).toBe('set (256-bit key)');
    expect(maskSecret(null)).toBe('(not set)');
    const k = generateKey();
    expect(secretValues({ ...emptySecrets(), apiSecret: 'x1', templateKey: k })).toEqual(['x1', k.toString('hex'), k.toString('base64')]);
  });

  it("holds the site ops key and operators' keys by id (file and credentials), and writes them back", () => {
    const file = join(dir, 'ops', 'secrets.yaml');
    const opsKey = generateKey();
    const alice = generateKey();
    writeSecrets(file, { ...emptySecrets(), opsKey, opsKeys: { alice } });
    const text = readFileSync(file, 'utf8');
    expect(text).toContain(`opsKey: ${opsKey.toString('hex')}`);
    expect(text).toContain(`alice: ${alice.toString('hex')}`);
    const s = loadSecrets({ file, credentialsDir: null });
    expect(s.opsKey?.equals(opsKey)).toBe(true);
    expect(s.opsKeys.alice?.equals(alice)).toBe(true);
    expect(secretValues(s)).toEqual(expect.arrayContaining([opsKey.toString('hex'), alice.toString('base64')]));
    const cred = join(dir, 'ops-creds');
    mkdirSync(cred);
    const bob = generateKey();
    writeFileSync(join(cred, 'ops-keys'), `bob: ${bob.toString('hex')}\n`);
    const c = loadSecrets({ file, credentialsDir: cred });
    expect(Object.keys(c.opsKeys)).toEqual(['bob']);
    expect(c.sources.opsKeys).toBe('credential:ops-keys');
  });

  it('holds the console password (file or credential console-password) and writes it back', () => {
    const file = join(dir, 'console', 'secrets.yaml');
    writeSecrets(file, {
      ...emptySecrets(),
      consolePassword: 'scrypt$16384$8$1$c2FsdHNhbHRzYWx0c2FsdA==$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g=',
    });
    expect(loadSecrets({ file, credentialsDir: null }).consolePassword).toMatch(/^scrypt\$16384\$/);
    const cred = join(dir, 'console-creds');
    mkdirSync(cred);
    writeFileSync(join(cred, 'console-password'), 'from systemd\n');
    const c = loadSecrets({ file, credentialsDir: cred });
    expect(c.consolePassword).toBe('from systemd');
    expect(c.sources.consolePassword).toBe('credential:console-password');
    expect(secretValues(c)).toContain('from systemd');
  });

  it('refuses operator key ids that are not allowed and keys that are not 32 bytes', () => {
    const file = join(dir, 'ops-bad.yaml');
    writeFileSync(file, `opsKeys:\n  site: ${'11'.repeat(32)}\n`, { mode: 0o600 });
    expect(failure(() => loadSecrets({ file, credentialsDir: null })).code).toBe('SECRETS_SYNTAX');
    writeFileSync(file, `opsKeys:\n  alice: abc\n`, { mode: 0o600 });
    expect(failure(() => loadSecrets({ file, credentialsDir: null })).code).toBe('SECRETS_BAD_KEY');
    writeFileSync(file, `opsKeys: [1, 2]\n`, { mode: 0o600 });
    expect(failure(() => loadSecrets({ file, credentialsDir: null })).code).toBe('SECRETS_SYNTAX');
  });
});

describe('secretsFilePath', () => {
  it("is the config's secretsFile, else secrets.yaml in the data folder, as an absolute path", () => {
    expect(secretsFilePath({ dataDir: '/var/lib/edge-agent', secretsFile: null })).toBe('/var/lib/edge-agent/secrets.yaml');
    expect(secretsFilePath({ dataDir: '/var/lib/edge-agent', secretsFile: '/etc/edge-agent/secrets.yaml' })).toBe(
      '/etc/edge-agent/secrets.yaml',
    );
    expect(secretsFilePath({ dataDir: 'data', secretsFile: null })).toBe(join(process.cwd(), 'data', 'secrets.yaml'));
  });
});
