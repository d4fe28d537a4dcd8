/**
 * The template cache's vocabulary: what a caller stores (`NewTemplate`, `NewPersonVersion`), what
 * it reads back (`TemplateMeta`, `StoredTemplate`, `TemplateUser`), the events, and the reports of
 * the change log, the integrity check and the key check. Types only.
 *
 * Types only. Tested in test/unit/store/template-cache/queries.test.ts and
 * test/unit/store/template-cache/changes.test.ts (the cache's concerns that speak it).
 */
import type { TemplateModality } from '../../core/modality.js';
import type { PersonVersion, TemplateFormat } from '../template-schema.js';

/** A version to record: `updatedAt` defaults to now. */
export type NewPersonVersion = Omit<PersonVersion, 'deleted' | 'updatedAt'> & { updatedAt?: string };

export interface TemplateMeta {
  id: string;
  employeeCode: string;
  modality: TemplateModality;
  /** Finger position (e.g. "right-index" or an ISO position number), eye ("left", "right"), or a badge's label ("badge", "card-2"). */
  position: string;
  format: TemplateFormat;
  sensorModel: string | null;
  quality: number | null;
  createdAt: string;
  sourceTerminal: string | null;
  /** Sync version from the site (0 = created locally). */
  version: number;
}

export interface StoredTemplate extends TemplateMeta {
  data: Uint8Array;
}

export interface NewTemplate {
  id?: string;
  employeeCode: string;
  modality: TemplateModality;
  position: string;
  format: TemplateFormat;
  data: Uint8Array;
  sensorModel?: string | null;
  quality?: number | null;
  createdAt?: string;
  sourceTerminal?: string | null;
  version?: number;
}

export interface TemplateUser {
  employeeCode: string;
  firstName: string | null;
  lastName: string | null;
  displayName: string | null;
  updatedAt: string;
}

export interface TemplateCacheEvents extends Record<string, unknown> {
  /** A template was stored (new or replaced); carries the bytes for the index, never log them. */
  added: StoredTemplate;
  removed: { id: string; employeeCode: string; modality: TemplateModality };
}

export interface IntegrityReport {
  ok: boolean;
  /** `PRAGMA integrity_check` lines ('ok' when sound). */
  sqlite: string[];
  users: number;
  templates: number;
  byModality: Record<TemplateModality, number>;
  /** Templates whose blob does not decrypt (tampered, truncated, or moved to another row). */
  undecryptable: Array<{ id: string; employeeCode: string }>;
}

/** See `TemplateCache.changeState`. */
export interface ChangeState {
  instance: string;
  generation: number;
  prunedThrough: number;
}

export type TemplateChange = { op: 'put'; template: StoredTemplate } | { op: 'del'; id: string };

export interface TemplateCacheOptions {
  key: Buffer | null | undefined;
  now?: () => Date;
}

export interface KeyVerdict {
  ok: boolean;
  checked: number;
  detail?: string;
}
