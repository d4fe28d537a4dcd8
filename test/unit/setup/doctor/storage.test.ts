import { mkdirSync, mkdtempSync } from 'node:fs';
import type { statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkDatabase, checkDisk, checkFileModes, DISK_FAIL_BYTES, DISK_WARN_BYTES } from '../../../../src/setup/doctor/storage.js';
import { openAgentDatabase } from '../../../../src/store/agent-db.js';

const root = mkdtempSync(join(tmpdir(), 'doctor-storage-'));
let n = 0;
const folder = () => {
  const d = join(root, `d${n++}`);
  mkdirSync(d, { mode: 0o700 });
  return d;
};
const statfsWith = (freeBytes: number) =>
  (async () => ({ bavail: freeBytes / 4096, bsize: 4096, blocks: (8 * 1024 * 1024 * 1024) / 4096 })) as unknown as typeof statfs;

describe('doctor: the data folder and database checks', () => {
  it('disk: the thresholds are where the names say, and the detail gives free and total space', async () => {
    const dir = folder();
    expect((await checkDisk(dir, statfsWith(DISK_FAIL_BYTES - 4096))).status).toBe('fail');
    expect((await checkDisk(dir, statfsWith(DISK_FAIL_BYTES))).status).toBe('warn');
    expect((await checkDisk(dir, statfsWith(DISK_WARN_BYTES - 4096))).status).toBe('warn');
    expect(await checkDisk(dir, statfsWith(DISK_WARN_BYTES))).toEqual({
      name: 'disk',
      status: 'pass',
      detail: `512 MB free of 8192 MB at ${dir}`,
      hint: null,
    });
  });

  it('database: none yet is a warning; a fresh one passes its integrity check', async () => {
    const dir = folder();
    expect(await checkDatabase(dir)).toMatchObject({ status: 'warn', detail: `no database yet at ${join(dir, 'agent.db')}` });
    await (await openAgentDatabase(dir)).close();
    expect(await checkDatabase(dir)).toMatchObject({ status: 'pass', detail: `${join(dir, 'agent.db')}: integrity_check ok` });
  });

  it('file modes: no data folder yet is a warning; a private one passes', async () => {
    expect(checkFileModes(join(root, 'not-yet'))).toMatchObject({
      status: 'warn',
      detail: `no data folder yet at ${join(root, 'not-yet')}`,
    });
    const dir = folder();
    await (await openAgentDatabase(dir)).close();
    expect(checkFileModes(dir)).toEqual({
      name: 'file-modes',
      status: 'pass',
      detail: `${dir} is 0700, its database files 0600`,
      hint: null,
    });
  });
});
