/**
 * The operations console (`edge-agent console`): a web page served from here, fed live from the
 * broker's retained state, info and metrics of every terminal under the prefix.
 *
 * - the fleet, grouped by site, updated in the page through Server-Sent Events (`/api/events`:
 *   a `snapshot`, then `rows` with the terminals that changed, at most every 500 ms, and
 *   `alerts`);
 * - a terminal's page (`/api/terminal`): 24 hours of metric history, its state changes, its last
 *   errors, its alerts, and signed commands (dead letters are listed with `queue-list`);
 * - alert rules (`console.alerts`), judged every 2 s and on every change, shown in the page and
 *   published retained on `<prefix>/<site>/alerts` whenever a site's set of alerts changes;
 * - `/metrics` for Prometheus; Home Assistant discovery for the sites that opt in.
 *
 * Listening beyond loopback needs a login (consolePassword in the secrets); with a login every
 * page but /login and /metrics needs a session. Commands need a login and an ops key.
 *
 * This file is the composition: the features below, started in the order listed and stopped in
 * reverse (the style of zigbee2mqtt's extensions). Each is a module of its own: mqtt-feed.ts,
 * alerts.ts, home-assistant.ts, http-routes.ts (with commands.ts and fleet-view.ts) and
 * live-updates.ts; console-context.ts is what they share.
 */
import { logger } from '../core/logger.js';
import { Alerts } from './alerts.js';
import { PageCommands } from './commands.js';
import { type CommandsState, type ConsoleFeature, type ConsoleOptions, consoleContext } from './console-context.js';
import { FleetView } from './fleet-view.js';
import { HomeAssistantDiscovery } from './home-assistant.js';
import { ConsoleHttp } from './http-routes.js';
import { LiveUpdates } from './live-updates.js';
import { MqttFeed } from './mqtt-feed.js';

export { CONSOLE_COMMANDS, type ConsoleCommand } from './commands.js';
export type { ConsoleOptions } from './console-context.js';

const log = logger('console');

export interface RunningConsole {
  /** `http://127.0.0.1:8470/` */
  url: string;
  host: string;
  port: number;
  commands: CommandsState;
  loginRequired: boolean;
  stop(): Promise<void>;
}

export async function startConsole(o: ConsoleOptions): Promise<RunningConsole> {
  const ctx = consoleContext(o);
  const view = new FleetView(ctx);
  const live = new LiveUpdates(ctx, view);
  // First, as it checks what can be checked before anything connects or listens.
  const http = new ConsoleHttp(
    ctx,
    { view, live, commands: new PageCommands(ctx) },
    { host: o.host ?? o.settings.host, port: o.port ?? o.settings.port },
  );
  const feed = new MqttFeed(ctx);
  const features: ConsoleFeature[] = [feed, new Alerts(ctx, feed), new HomeAssistantDiscovery(ctx, feed), http, live];

  const started: ConsoleFeature[] = [];
  const stopAll = async () => {
    for (const f of started.splice(0).reverse()) {
      try {
        await f.stop();
      } catch (err) {
        log.warn({ feature: f.name, err: (err as Error).message }, 'a console feature did not stop cleanly');
      }
    }
  };
  try {
    for (const f of features) {
      await f.start();
      started.push(f);
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  return {
    url: http.url,
    host: http.host,
    port: http.port,
    commands: ctx.commands,
    loginRequired: o.login !== null,
    stop: stopAll,
  };
}
