/** What the console's features share: commands on or off and why, the counters, the events. */
import { describe, expect, it } from 'vitest';
import { commandsState, ConsoleEvents } from '../../../src/console/console-context.js';
import { ConsoleLogin } from '../../../src/console/login.js';
import { testContext } from '../../helpers/console-parts.js';

describe('the console context', () => {
  it('turns commands on only with a login and an ops key, and says which is missing', async () => {
    const login = await ConsoleLogin.create('long enough secret', 1);
    const signer = { key: Buffer.alloc(32, 1), kid: 'site' };
    expect(commandsState({ login: null, signer })).toEqual({
      enabled: false,
      reason: expect.stringContaining('consolePassword'),
      kid: null,
    });
    expect(commandsState({ login, signer: null })).toEqual({ enabled: false, reason: expect.stringContaining('ops key'), kid: null });
    expect(commandsState({ login, signer })).toEqual({ enabled: true, reason: null, kid: 'site' });
  });

  it('starts with an empty fleet, no alerts, zeroed counters and the broker not yet there', () => {
    const ctx = testContext({ settings: { historyHours: 2 } });
    expect(ctx.fleet.size).toBe(0);
    expect(ctx.book.all()).toEqual([]);
    expect(ctx.health).toMatchObject({ mqttConnected: false, messages: 0, dropped: 0, httpRequests: 0, commandsSent: 0 });
    expect(ctx.settings.historyHours).toBe(2);
    expect(ctx.commands.enabled).toBe(false);
  });

  it('carries the signals between features', () => {
    const events = new ConsoleEvents();
    const seen: unknown[] = [];
    events.on('alerts', (k) => seen.push(['alerts', k]));
    events.on('broker', (up) => seen.push(['broker', up]));
    events.alertsChanged('s/t');
    events.alertsChanged(null);
    events.brokerChanged(true);
    expect(seen).toEqual([
      ['alerts', 's/t'],
      ['alerts', null],
      ['broker', true],
    ]);
  });
});
