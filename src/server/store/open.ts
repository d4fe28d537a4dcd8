/** Opens the service's store named by `--db`: an SQLite file path. */
import { SqliteStore } from './sqlite-store.js';
import type { ServiceStore } from './store.js';

export async function openServiceStore(db: string): Promise<ServiceStore> {
  return SqliteStore.open(db);
}
