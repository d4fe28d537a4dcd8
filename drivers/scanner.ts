/**
 * One interface for every scanner family. The agent never branches on the family: it asks for
 * `capabilities` and calls what is there.
 *
 * A scanner knows nothing about employees: module slots are numbers, templates are bytes.
 *
 * Types only. Tested in test/unit/drivers/families.test.ts (every family's scanner behind this
 * interface) and test/unit/terminal/scanner-worker.test.ts (the worker drives a Scanner by its
 * capabilities).
 */
import type { TypedEmitter } from '../src/core/events.js';
import type { ScannerModality } from '../src/core/modality.js';
import type { SensorResolution } from './resolution.js';

export type { SensorResolution } from './resolution.js';

export type ScannerFamily = 'r30x' | 'gt521' | 'iris-hid' | 'badge-serial' | 'badge-hid';

export interface ScannerInfo {
  family: ScannerFamily;
  modality: ScannerModality;
  model: string;
  firmware: string | null;
  serial: string | null;
  transport: 'serial' | 'hid' | 'memory';
  path: string;
  baud: number | null;
  /** Template slots on the module (null where the module stores none). */
  capacity: number | null;
  /** Templates stored on the module now (null where unknown). */
  templates: number | null;
  image: { width: number; height: number; bitsPerPixel: number } | null;
  /**
   * The sensor's resolution for this model (the family's registry entry knows it): dots per inch
   * for a fingerprint sensor, pixels across the iris for an iris camera, none for a badge reader.
   */
  resolution: SensorResolution;
  /** Format name of the module's own templates (`r30x-char`, `gt521`), where it keeps any. */
  moduleTemplateFormat?: string | null;
}

/** An image as the scanner gave it, widened to 8 bits per pixel, row-major, top row first. */
export interface CapturedImage {
  width: number;
  height: number;
  /** One byte a pixel, 0 = black. */
  pixels: Uint8Array;
  /** Bits per pixel on the wire (4 for R30x UpImage, 8 otherwise). */
  sourceBitsPerPixel: number;
  /**
   * Pixels per inch at the sensor: a fingerprint module's from its model's sensor resolution
   * (the registry's table, never a guess); an iris camera's as the camera reports it.
   */
  dpi: number;
  /** Iris cameras: the iris diameter in pixels the camera measured in this image (ISO/IEC 19794-6's measure of resolution), null where unknown. */
  irisDiameterPx?: number | null;
  /** Device-reported quality 0..100 where the device gives one. */
  quality: number | null;
}

/** A template in the module's own format (`r30x-char`, `gt521`), opaque to the agent. */
export interface ModuleTemplate {
  format: string;
  data: Uint8Array;
}

export interface ModuleSearchResult {
  slot: number;
  /** The module's own score (not calibrated like host scores). */
  score: number;
}

export type Feedback = 'accepted' | 'unknown' | 'try-again' | 'idle' | 'busy' | 'enroll-step' | 'error';

export interface ScannerCapabilities {
  /** Can return an image (`captureImage`). */
  image: boolean;
  /** Keeps templates in slots and searches them (`searchOnModule`, `storeOnModule`). */
  moduleSearch: boolean;
  /** Enrolls on the module from several presses and returns its template (`enrollOnModule`). */
  moduleEnroll: boolean;
  /** How many presses the module's own enrolment takes (R30x 2, GT-521 3), where it enrols. */
  moduleEnrollPresses?: number;
  /** LED or beep feedback beyond a no-op. */
  feedback: boolean;
  /** Reads badges (`readCredential`): a card reader. Absent on scanners that read no cards. */
  credential?: boolean;
}

/** One badge read: the card's number as a credential, the same whichever reader read it. */
export interface BadgeRead {
  /**
   * `<bits>:<number>`, e.g. `32:8844356` for an EM4100 card read as 10 decimal digits, as hex or
   * as Wiegand 34, `24:8402243` for a Wiegand 26 read (facility × 65536 + card). A secret like a
   * template: never logged, only its keyed hash is stored.
   */
  credential: string;
  /** The line format it arrived in (`em4100-dec`, ...). */
  format: string;
}

/**
 * What a module enrolment asks of the person, before each step: place the finger for press
 * `press` of `of` (`again` after a press that did not count, with the `reason`), or lift it.
 */
export interface PressPrompt {
  press: number;
  of: number;
  action: 'place' | 'again' | 'lift';
  /** Why a press is asked again (the module's refusal), or that the finger is still on the sensor. */
  reason?: string;
}

export interface ModuleEnrollOptions {
  /** Presses asked for; a module takes its own number (R30x 2, GT-521 3) and refuses or ignores others. */
  presses?: number;
  /** After each press the module read (1-based). */
  onStep?: (step: number) => void;
  /** Before each step: what the person should do now (place, place again, lift). */
  onPrompt?: (prompt: PressPrompt) => void;
  /**
   * Tries more for one press that did not count (a poor image, a finger lifted too soon, presses
   * that do not agree): the earlier presses are kept and only that one is asked again. Default 2.
   */
  retries?: number;
  /** Stops waiting for presses (the enrolment was cancelled): rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface ScannerEvents extends Record<string, unknown> {
  /** The device went away (unplugged, stopped answering). */
  disconnect: Error;
  /** The device is back after a disconnect. */
  reconnect: ScannerInfo;
}

export interface Scanner extends TypedEmitter<ScannerEvents> {
  readonly family: ScannerFamily;
  readonly modality: ScannerModality;
  readonly capabilities: ScannerCapabilities;
  open(): Promise<ScannerInfo>;
  close(): Promise<void>;
  info(): Promise<ScannerInfo>;
  /**
   * Waits until a finger is on the sensor, an eye is in view or a badge was read (a read waits).
   * Resolves true when one is there, false on timeout or abort.
   */
  waitForPresence(options: { timeoutMs: number; signal?: AbortSignal }): Promise<boolean>;
  /** Captures one image (finger on the sensor or eye in view required). */
  captureImage(): Promise<CapturedImage>;
  /** Captures and searches the module's own slots; null when nothing matched. */
  searchOnModule(): Promise<ModuleSearchResult | null>;
  /**
   * Enrols on the module from repeated presses; returns the module template (not stored in a
   * slot). A press that does not count is asked again (`retries`), keeping the earlier ones.
   */
  enrollOnModule(options?: ModuleEnrollOptions): Promise<ModuleTemplate>;
  /** Writes a module template into a slot. */
  storeOnModule(slot: number, template: ModuleTemplate): Promise<void>;
  /** Reads the module template stored in a slot. */
  readFromModule(slot: number): Promise<ModuleTemplate>;
  deleteOnModule(slot: number): Promise<void>;
  clearModule(): Promise<void>;
  /** Slots in use on the module. */
  usedSlots(): Promise<number[]>;
  feedback(kind: Feedback): Promise<void>;
  /**
   * Card readers (`capabilities.credential`): takes the badge read that waits. A read that failed
   * its checksum or format rejects (`DRIVER_CHECKSUM`, `DRIVER_PROTOCOL`: ask to present again);
   * nothing waiting is `DRIVER_NO_CARD`.
   */
  readCredential?(): Promise<BadgeRead>;
}

/** True when an error code says the scanner itself is gone (unplugged, disconnected, its transport lost), not that one read failed. */
export function isScannerGone(code: string): boolean {
  return /DISCONNECT|UNPLUG|TRANSPORT/.test(code);
}
