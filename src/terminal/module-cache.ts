/**
 * Serial fingerprint modules as a cache: the module templates of the most active employees are
 * placed in the module's own slots so the module's search (fast, little data on the wire)
 * answers first; a miss falls back to host matching from the image.
 *
 * Placement: the employees with a module template in this scanner's format are ranked by their
 * punches over the last 30 days (then by code, for employees who never punched); the top ones up
 * to the module's capacity are kept on the module; a slot whose person left the top list is
 * freed and reused.
 *
 * Tested in test/integration/agent-e2e.test.ts (a person's module template placed in a slot at
 * start; the module's search answers first, a miss goes to host matching) and
 * test/integration/agent-site-sync.test.ts (taken off the module on delete). Not tested: the
 * ranking by punches when more people than slots.
 */
import type { Scanner, ScannerInfo } from '../../drivers/scanner.js';
import { logger } from '../core/logger.js';
import type { ModuleSlots } from '../store/module-slots.js';
import type { TemplateCache } from '../store/template-cache.js';

export interface ModuleTemplateRef {
  employeeCode: string;
  templateId: string;
  data: Uint8Array;
}

export interface PlacementResult {
  placed: number;
  removed: number;
  kept: number;
  capacity: number;
}

const log = logger('agent:module-cache');
const ACTIVITY_WINDOW_MS = 30 * 86_400_000;

export async function placeModuleTemplates(options: {
  scanner: Scanner;
  info: ScannerInfo;
  scannerKey: string;
  slots: ModuleSlots;
  /** Every cached module template of one format, one (the newest) per employee. */
  templatesOfFormat: (format: string) => Promise<ModuleTemplateRef[]>;
  now?: number;
}): Promise<PlacementResult | null> {
  const { scanner, info, scannerKey, slots } = options;
  const format = info.moduleTemplateFormat;
  if (!scanner.capabilities.moduleSearch || !format || !info.capacity) return null;
  const capacity = info.capacity;
  const available = await options.templatesOfFormat(format);
  const byEmployee = new Map(available.map((t) => [t.employeeCode, t]));
  const ranked = await slots.mostActive((options.now ?? Date.now()) - ACTIVITY_WINDOW_MS, capacity * 4 + 100);
  const desired: ModuleTemplateRef[] = [];
  const chosen = new Set<string>();
  for (const { employeeCode } of ranked) {
    const t = byEmployee.get(employeeCode);
    if (t && desired.length < capacity) {
      desired.push(t);
      chosen.add(employeeCode);
    }
  }
  for (const t of [...available].sort((a, b) => a.employeeCode.localeCompare(b.employeeCode))) {
    if (desired.length >= capacity) break;
    if (!chosen.has(t.employeeCode)) {
      desired.push(t);
      chosen.add(t.employeeCode);
    }
  }
  const wanted = new Map(desired.map((t) => [t.templateId, t]));
  const current = await slots.list(scannerKey);
  let removed = 0;
  let kept = 0;
  const used = new Set<number>(await scanner.usedSlots());
  const inPlace = new Set<string>();
  for (const a of current) {
    if (wanted.has(a.templateId) && used.has(a.slot)) {
      inPlace.add(a.templateId);
      kept++;
      continue;
    }
    if (used.has(a.slot)) await scanner.deleteOnModule(a.slot);
    used.delete(a.slot);
    await slots.release(scannerKey, a.slot);
    removed++;
  }
  let placed = 0;
  let next = 0;
  for (const t of desired) {
    if (inPlace.has(t.templateId)) continue;
    while (used.has(next) && next < capacity) next++;
    if (next >= capacity) break;
    await scanner.storeOnModule(next, { format, data: t.data });
    await slots.assign(scannerKey, { slot: next, employeeCode: t.employeeCode, templateId: t.templateId });
    used.add(next);
    placed++;
  }
  log.info({ scanner: scannerKey, placed, removed, kept, capacity }, 'module templates placed');
  return { placed, removed, kept, capacity };
}

/** Every cached module template of one format, the newest per employee. */
export async function moduleTemplatesOf(cache: TemplateCache, format: string): Promise<ModuleTemplateRef[]> {
  const newest = new Map<string, ModuleTemplateRef & { createdAt: string }>();
  for await (const t of cache.listTemplates({ modality: 'finger' })) {
    if (t.format !== format) continue;
    const prev = newest.get(t.employeeCode);
    if (!prev || t.createdAt > prev.createdAt)
      newest.set(t.employeeCode, { employeeCode: t.employeeCode, templateId: t.id, data: t.data, createdAt: t.createdAt });
  }
  return [...newest.values()].map(({ createdAt: _c, ...r }) => r);
}
