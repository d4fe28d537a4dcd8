/**
 * What happens to a person's templates beyond the cache: placed again on the modules when the
 * cache changed under them, taken off the modules, deleted here and across the site.
 *
 * Tested in test/integration/agent-site-sync.test.ts (delete-user over MQTT removes a person here,
 * off the module and across the site).
 */
import { toAgentError } from '../core/errors.js';
import { logger } from '../core/logger.js';
import { deleteWithTombstone } from '../site-sync/site-sync.js';
import { siteStore } from '../site-sync/template-store.js';
import { moduleTemplatesOf, placeModuleTemplates } from '../terminal/module-cache.js';
import type { TerminalRuntime } from './runtime.js';

const log = logger('agent:terminal');

/** Places the cached module templates again on every ready module (the cache changed under them). */
export async function refreshModuleTemplates(rt: TerminalRuntime): Promise<void> {
  const { cache, slots } = rt;
  if (!cache || !slots) return;
  for (const worker of rt.workers.values()) {
    const info = worker.info;
    if (worker.status !== 'ready' || !info?.moduleTemplateFormat) continue;
    try {
      await worker.withScanner(
        async (scanner) =>
          scanner.capabilities.moduleSearch
            ? placeModuleTemplates({
                scanner,
                info,
                scannerKey: worker.key,
                slots,
                templatesOfFormat: (format) => moduleTemplatesOf(cache, format),
              })
            : null,
        { session: false },
      );
      rt.resolve(`modules:${worker.key}`);
    } catch (err) {
      rt.noteError(err, `modules:${worker.key}`);
      log.warn(
        { scanner: worker.key, err: toAgentError(err).toJSON() },
        'could not place module templates after a site change; placed again at the next reconnection',
      );
    }
  }
}

/** Takes a person's templates off this terminal's modules; resolves to the slots cleared. */
export async function clearPersonFromModules(rt: TerminalRuntime, employeeCode: string): Promise<number> {
  let moduleSlots = 0;
  if (!rt.slots) return 0;
  for (const { scannerKey: key, slot } of await rt.slots.slotsOf(employeeCode)) {
    const worker = rt.workers.get(key);
    try {
      if (worker) await worker.withScanner((s) => s.deleteOnModule(slot), { session: false });
      moduleSlots++;
    } catch (err) {
      log.warn(
        { scanner: key, slot, err: toAgentError(err).toJSON() },
        'could not delete the template from the module now; it is forgotten and overwritten at the next placement',
      );
    }
    await rt.slots.release(key, slot);
  }
  return moduleSlots;
}

/**
 * Deletes a person's templates here, on this terminal's modules and across the site. The
 * deletion is a tombstone with a version above what this terminal holds (kept even without site
 * sync, so an older site record cannot bring the person back later); with site sync it is
 * published, sealed and retained. The code must already satisfy the shared rule.
 */
export async function deletePersonTemplates(rt: TerminalRuntime, employeeCode: string): Promise<Record<string, unknown>> {
  const moduleSlots = await clearPersonFromModules(rt, employeeCode);
  let templatesRemoved = 0;
  let version: number | null = null;
  let site = false;
  let siteError: string | null = null;
  if (rt.cache) {
    const local = await deleteWithTombstone(siteStore(rt.cache), employeeCode, rt.config.terminal.id, Date.now());
    templatesRemoved = local.removed;
    version = local.record.version;
    if (rt.siteSync) {
      try {
        await rt.siteSync.publishTombstone(local.record);
        site = true;
      } catch (err) {
        const e = toAgentError(err);
        siteError = `${e.code}: ${e.message}`;
        log.warn({ employeeCode, code: e.code, err: e.message }, 'deleted here, but the deletion could not be published to the site');
      }
    }
  }
  log.info({ employeeCode, templatesRemoved, moduleSlots, site, version }, "person's templates deleted");
  return {
    employeeCode,
    templatesRemoved,
    moduleSlotsCleared: moduleSlots,
    deletedAcrossSite: site,
    version,
    ...(siteError ? { siteError } : {}),
  };
}
