import { describe, expect, it } from 'vitest';
import { eventsClientId } from '../../../src/daemon/upstreams.js';

describe('eventsClientId', () => {
  const templateKey = Buffer.alloc(32, 7);

  it('is the same at every start, and not guessable from the terminal id', () => {
    const id = eventsClientId('plant-north', 'gate-1', { templateKey, opsKey: null });
    expect(id).toMatch(/^gate-1-events-[0-9a-f]{12}$/);
    expect(eventsClientId('plant-north', 'gate-1', { templateKey: Buffer.alloc(32, 7), opsKey: null })).toBe(id);
    // Another key, site or terminal gives another id.
    expect(eventsClientId('plant-north', 'gate-1', { templateKey: Buffer.alloc(32, 8), opsKey: null })).not.toBe(id);
    expect(eventsClientId('plant-south', 'gate-1', { templateKey, opsKey: null })).not.toBe(id);
    expect(eventsClientId('plant-north', 'gate-2', { templateKey, opsKey: null })).not.toMatch(/^gate-1-/);
  });

  it('falls back to the ops key, then to the plain id on a terminal with no key', () => {
    expect(eventsClientId('s', 't', { templateKey: null, opsKey: Buffer.alloc(32, 1) })).toMatch(/^t-events-[0-9a-f]{12}$/);
    expect(eventsClientId('s', 't', { templateKey: null, opsKey: null })).toBe('t-events');
  });
});
