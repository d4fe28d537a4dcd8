import { describe, expect, it } from 'vitest';
import { judgeRecord, nextVersion, parseRecord } from '../../../src/site-sync/site-sync.js';

describe('site sync rules', () => {
  it('applies only a higher version; the same version is a repeat with the same content and refused with other content', () => {
    expect(judgeRecord(5, 'aa', null)).toBe('apply');
    expect(judgeRecord(6, 'bb', { version: 5, deleted: true, digest: 'aa' })).toBe('apply');
    expect(judgeRecord(5, 'aa', { version: 5, deleted: false, digest: 'aa' })).toBe('same');
    expect(judgeRecord(5, 'bb', { version: 5, deleted: false, digest: 'aa' })).toBe('conflict');
    expect(judgeRecord(5, 'bb', { version: 5, deleted: false, digest: null })).toBe('same');
    expect(judgeRecord(4, 'aa', { version: 5, deleted: true, digest: 'aa' })).toBe('older');
    expect(nextVersion({ version: 9_000_000_000_000, deleted: true, digest: null }, 1_000)).toBe(9_000_000_000_001);
    expect(nextVersion(null, 1_000)).toBe(1_000);
  });
  it('validates records: v2 and tombstones, v1 read as versioned by updatedAt, anything else malformed', () => {
    const t = {
      id: 'x',
      modality: 'finger',
      position: 'right-index',
      format: 'iso19794-2',
      quality: 50,
      sensorModel: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      data: 'AAEC',
    };
    const v2 = {
      v: 2,
      employeeCode: 'E1',
      version: 7,
      updatedAt: '2026-01-01T00:00:00.000Z',
      origin: 'gate-1',
      deleted: false,
      templates: [t],
    };
    expect(parseRecord(Buffer.from(JSON.stringify(v2)), 'E1')).toMatchObject({ version: 7, deleted: false });
    const v1 = { v: 1, employeeCode: 'E1', updatedAt: '2026-01-01T00:00:00.000Z', origin: 'gate-1', templates: [t] };
    expect(parseRecord(Buffer.from(JSON.stringify(v1)), 'E1')).toMatchObject({ v: 2, version: Date.parse(v1.updatedAt), deleted: false });
    const bad =
      (r: unknown, code = 'E1') =>
      () =>
        parseRecord(Buffer.from(JSON.stringify(r)), code);
    expect(bad(v2, 'E2')).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
    expect(bad({ ...v2, deleted: true })).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
    expect(bad({ ...v2, version: 0 })).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
    expect(bad({ ...v2, templates: [{ ...t, format: 'exe' }] })).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
    expect(bad({ ...v2, templates: Array.from({ length: 257 }, () => t) })).toThrow(
      expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }),
    );
    expect(bad({ ...v2, origin: 'a/b' })).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
    expect(() => parseRecord(Buffer.from('nope'), 'E1')).toThrow(expect.objectContaining({ code: 'OPS_SYNC_MALFORMED' }));
  });
});
