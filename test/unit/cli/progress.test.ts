import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { duration, progress, progressLine } from '../../../src/cli/progress.js';

function fakeTty(isTTY: boolean): NodeJS.WriteStream & { text: () => string } {
  const s = new PassThrough() as unknown as NodeJS.WriteStream & { text: () => string };
  let buf = '';
  s.on('data', (d: Buffer) => (buf += d.toString()));
  (s as { isTTY: boolean }).isTTY = isTTY;
  s.text = () => buf;
  return s;
}

describe('progress for a person at a terminal', () => {
  it('shows a bar, the count, the rate and the time left', () => {
    expect(progressLine('importing', 5200, 10_000, 2000, 'punches')).toBe(
      'importing  [##########..........]   52%  5,200/10,000  2,600 punches/s  about 2 s left',
    );
    expect(progressLine('draining', 0, 300, 500)).toBe('draining  [....................]    0%  0/300');
    expect(progressLine('sent', 42, undefined, 3000)).toBe('sent  42  14/s');
    expect(duration(4000)).toBe('67 min');
  });

  it('redraws one line in place on a TTY, keeps lines said in between, and clears itself', () => {
    const out = fakeTty(true);
    let t = 0;
    const p = progress('importing', { total: 100, stream: out, now: () => t });
    t = 1000;
    p.update(50);
    p.say('line above');
    t = 2000;
    p.update(100);
    p.finish('imported 100');
    const text = out.text();
    expect(text).toContain('\r\x1b[2Kimporting  [##########..........]   50%  50/100  50/s  about 1 s left');
    expect(text).toContain('\r\x1b[2Kline above\n');
    expect(text.endsWith('\r\x1b[2Kimported 100\n')).toBe(true);
  });

  it('prints no bar when the stream is not a terminal, only the lines said', () => {
    const out = fakeTty(false);
    const p = progress('importing', { total: 10, stream: out });
    p.update(5);
    p.say('x');
    p.finish('done');
    expect(out.text()).toBe('x\n');
  });
});
