/**
 * USB keyboard-wedge readers type the card: each character is a boot-protocol keyboard input
 * report (8 bytes: modifier bits, a reserved byte, up to six key usage codes of the keys held
 * down, HID Usage Tables, page 0x07), the key pressed, then a report with it released. Enter (or
 * Tab, or keypad Enter) ends the card's line. One codec for the reader and its simulator:
 *
 * - `KeyboardDecoder` turns reports into the characters of the keys newly pressed (a key held
 *   over several reports counts once; a report of all 0x01, the keyboard's "too many keys", is
 *   ignored), so the reader can split the text into lines like a serial line. A 9-byte report is
 *   taken as a numbered one (report id first) and its id skipped.
 * - `typeText` gives the reports that type a text, each character pressed and released.
 *
 * Keys without a character here (function keys, arrows, ...) type nothing: a reader sends digits,
 * hex letters, a comma and the line end.
 */

/** Usage code → [character, character with Shift]. */
const KEYS = new Map<number, [string, string]>();
for (let i = 0; i < 26; i++) KEYS.set(0x04 + i, [String.fromCharCode(0x61 + i), String.fromCharCode(0x41 + i)]);
for (let i = 0; i < 9; i++) KEYS.set(0x1e + i, [String(i + 1), '!@#$%^&*('[i]!]);
KEYS.set(0x27, ['0', ')']);
KEYS.set(0x28, ['\n', '\n']); // Enter
KEYS.set(0x2b, ['\n', '\n']); // Tab ends a line too (readers set to "Tab after the card")
KEYS.set(0x2c, [' ', ' ']);
KEYS.set(0x2d, ['-', '_']);
KEYS.set(0x33, [';', ':']);
KEYS.set(0x36, [',', '<']);
KEYS.set(0x58, ['\n', '\n']); // keypad Enter
for (let i = 0; i < 9; i++) KEYS.set(0x59 + i, [String(i + 1), String(i + 1)]); // keypad 1-9
KEYS.set(0x62, ['0', '0']); // keypad 0

const SHIFT = 0x22; // left (0x02) or right (0x20) Shift
const ROLLOVER = 0x01;

/** Usage code and Shift for a character (the reverse of KEYS, main keys first). */
const CHARS = new Map<string, { usage: number; shift: boolean }>();
for (const [usage, [plain, shifted]] of KEYS) {
  if (usage >= 0x58) continue; // keypad: a reader types the main keys
  if (!CHARS.has(plain)) CHARS.set(plain, { usage, shift: false });
  if (shifted !== plain && !CHARS.has(shifted)) CHARS.set(shifted, { usage, shift: true });
}
CHARS.set('\n', { usage: 0x28, shift: false });

export const KEYBOARD_REPORT_BYTES = 8;

export class KeyboardDecoder {
  #held = new Set<number>();

  /** The characters of the keys pressed in this report (not already held in the last one). */
  decode(report: Uint8Array): string {
    const r = report.length === KEYBOARD_REPORT_BYTES + 1 ? report.subarray(1) : report;
    if (r.length < 3) return '';
    const keys = [...r.subarray(2, KEYBOARD_REPORT_BYTES)].filter((k) => k !== 0);
    if (keys.length > 0 && keys.every((k) => k === ROLLOVER)) return '';
    const shift = (r[0]! & SHIFT) !== 0;
    let out = '';
    for (const k of keys) {
      if (this.#held.has(k)) continue;
      const chars = KEYS.get(k);
      if (chars) out += shift ? chars[1] : chars[0];
    }
    this.#held = new Set(keys);
    return out;
  }

  reset(): void {
    this.#held.clear();
  }
}

/**
 * The reports that type `text`: each character pressed, then released. A line end is one Enter
 * (a CR before it types nothing); characters a keyboard has no key for are skipped.
 */
export function typeText(text: string): Buffer[] {
  const reports: Buffer[] = [];
  for (const ch of text) {
    const key = CHARS.get(ch);
    if (!key) continue;
    const press = Buffer.alloc(KEYBOARD_REPORT_BYTES);
    press[0] = key.shift ? 0x02 : 0;
    press[2] = key.usage;
    reports.push(press, Buffer.alloc(KEYBOARD_REPORT_BYTES));
  }
  return reports;
}
