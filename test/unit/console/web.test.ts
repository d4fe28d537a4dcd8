import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { escapeHtml, hostAllowed, isLoopback, loadAssets, originAllowed } from '../../../src/console/web.js';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe("the console's HTTP checks", () => {
  it('answers a loopback console only under loopback names (no DNS rebinding)', () => {
    expect(isLoopback('127.0.0.1') && isLoopback('::1') && isLoopback('localhost') && isLoopback('127.3.0.1')).toBe(true);
    expect(isLoopback('0.0.0.0') || isLoopback('10.0.0.1')).toBe(false);
    expect(hostAllowed('127.0.0.1', '127.0.0.1:8470')).toBe(true);
    expect(hostAllowed('127.0.0.1', 'localhost:9000')).toBe(true);
    expect(hostAllowed('127.0.0.1', '[::1]:8470')).toBe(true);
    expect(hostAllowed('127.0.0.1', 'evil.example.com:8470')).toBe(false);
    expect(hostAllowed('127.0.0.1', undefined)).toBe(false);
    expect(hostAllowed('0.0.0.0', 'ops.example.com')).toBe(true);
  });

  it("takes a POST only from the console's own origin or an allowed one", () => {
    expect(originAllowed(req({ host: '127.0.0.1:8470', origin: 'http://127.0.0.1:8470' }), false, [])).toBe(true);
    expect(originAllowed(req({ host: '127.0.0.1:8470', origin: 'https://127.0.0.1:8470' }), false, [])).toBe(false);
    expect(originAllowed(req({ host: '127.0.0.1:8470', origin: 'http://evil.example' }), false, [])).toBe(false);
    expect(originAllowed(req({ host: '127.0.0.1:8470', origin: 'null' }), false, [])).toBe(false);
    expect(originAllowed(req({ host: '127.0.0.1:8470' }), false, [])).toBe(false);
    expect(originAllowed(req({ host: 'internal:8470', origin: 'https://ops.example.com' }), false, ['https://ops.example.com'])).toBe(true);
  });

  it("finds the page's files, or says where it looked", () => {
    expect([...loadAssets().keys()].sort()).toEqual(['app.css', 'app.js', 'index.html', 'login.html']);
    expect(() => loadAssets(new URL('file:///nonexistent/'))).toThrow(expect.objectContaining({ code: 'CONSOLE_ASSETS_MISSING' }));
    expect(escapeHtml('<a href="x">\'&')).toBe('&#60;a href=&#34;x&#34;&#62;&#39;&#38;');
  });

  it('the page loads nothing from elsewhere (no CDN, no external fonts)', () => {
    for (const [name, asset] of loadAssets())
      expect(asset.body.toString('utf8'), name).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  });
});
