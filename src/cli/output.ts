/**
 * What a command prints, made safe for the terminal that shows it. Text that came from the wire (a
 * terminal's lastError or name on the broker, an ops answer, what the attendance service said and
 * the outbox kept) may hold control characters: an escape sequence would retitle the window, clear
 * the screen or recolour what follows, a carriage return or a bidi override would hide what is
 * really there. Every CLI command prints such text through `out`/`err` (or `printJson`, whose JSON
 * escapes them), so `forTerminal` is the one place that strips them.
 */
import type { Writable } from 'node:stream';

/** Whole escape sequences: CSI (`ESC [` or C1 `0x9b`) … final byte; OSC/DCS/PM/APC/SOS … BEL or ST (or the end of the line); ESC and one more. */
const ESCAPES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b[\]P^_X]|[\x90\x9d\x9e\x9f\x98])[^\x07\x1b\x9c\n]*(?:\x07|\x1b\\|\x9c)?|\x1b[\s\S]?/g;
/** What is left after the sequences: C0 but tab and newline, DEL, C1, and the bidi controls that reorder what a person reads. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/** `text` without escape sequences and control characters; newline and tab stay. */
export function forTerminal(text: string): string {
  return text.replace(ESCAPES, '').replace(CONTROLS, '');
}

/** One line of `text` for a column or a message: newlines and tabs become spaces too. */
export function oneLine(text: string): string {
  return forTerminal(text).replace(/[\n\t]/g, ' ');
}

/** Writes `text` on stdout, stripped for the terminal. */
export function out(text: string): boolean {
  return process.stdout.write(forTerminal(text));
}

/** Writes `text` on stderr, stripped for the terminal. */
export function err(text: string): boolean {
  return process.stderr.write(forTerminal(text));
}

/**
 * JSON on one line: `JSON.stringify` escapes C0 but leaves DEL, C1 and the bidi controls as they
 * are, so those are escaped too (the value read back is the same).
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * A stream for writers that take one (`FleetWatch`): what is written goes to `target` stripped,
 * and back-pressure (`write`'s answer, `drain`) is `target`'s.
 */
export function sanitizedStream(target: NodeJS.WriteStream = process.stdout): Writable {
  return new Proxy(target, {
    get(t, prop, receiver) {
      if (prop === 'write')
        return (chunk: unknown, ...rest: unknown[]) =>
          (t.write as (...a: unknown[]) => boolean)(typeof chunk === 'string' ? forTerminal(chunk) : chunk, ...rest);
      const v = Reflect.get(t, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  }) as unknown as Writable;
}
