/**
 * The site-sync component: enrolled templates shared with every terminal of the site over MQTT,
 * and the modules kept in step with what the site adds or removes.
 *
 * Tested in test/integration/agent-site-sync.test.ts (a person published, applied on both
 * terminals, deleted everywhere).
 */
import { logger } from '../../core/logger.js';
import { SiteTemplateSync } from '../../site-sync/site-sync.js';
import { siteStore } from '../../site-sync/template-store.js';
import type { DaemonComponent } from '../component.js';
import { clearPersonFromModules, refreshModuleTemplates } from '../people.js';
import type { TerminalRuntime } from '../runtime.js';
import { mqttClientOptions } from '../upstreams.js';

const log = logger('agent:terminal');

export class SiteSyncComponent implements DaemonComponent {
  readonly name = 'site-sync';
  readonly #rt: TerminalRuntime;
  #placeTimer: NodeJS.Timeout | null = null;

  constructor(rt: TerminalRuntime) {
    this.#rt = rt;
  }

  async start(): Promise<void> {
    const rt = this.#rt;
    const { config, secrets } = rt;
    if (!config.mqtt.url || !rt.cache) return;
    if (!secrets.siteKey) {
      log.warn('no site key: enrolled templates stay on this terminal (set siteKey in the secrets file to share them with the site)');
      return;
    }
    const sync = new SiteTemplateSync({
      url: config.mqtt.url,
      mqttOptions: mqttClientOptions(config, secrets, `${config.terminal.id}-sync`),
      prefix: config.mqtt.prefix,
      site: config.terminal.site,
      terminal: config.terminal.id,
      key: secrets.siteKey,
      store: siteStore(rt.cache),
      maxPayloadBytes: config.mqtt.maxPayloadBytes,
    });
    // A record that could not be applied holds until a record of that person applies.
    sync.on('error', ({ employeeCode, error }) => rt.noteError(error, `site:${employeeCode}`));
    sync.on('removed', ({ employeeCode }) => rt.resolve(`site:${employeeCode}`));
    // The modules follow the cache: a person received from the site is placed in a slot (after a
    // burst of retained records, once), a person deleted through the site leaves the modules now.
    sync.on('applied', ({ employeeCode }) => {
      rt.resolve(`site:${employeeCode}`);
      if (this.#placeTimer) clearTimeout(this.#placeTimer);
      this.#placeTimer = setTimeout(() => {
        this.#placeTimer = null;
        void refreshModuleTemplates(rt);
      }, 300);
    });
    sync.on('removed', ({ employeeCode }) => void clearPersonFromModules(rt, employeeCode));
    await sync.start();
    rt.siteSync = sync;
  }

  async stop(): Promise<void> {
    if (this.#placeTimer) clearTimeout(this.#placeTimer);
    this.#placeTimer = null;
    await this.#rt.siteSync?.stop();
    this.#rt.siteSync = null;
  }
}
