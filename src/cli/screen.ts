/**
 * What a command prints for a person at a terminal that redraws, kept apart from what it prints
 * for a pipe or a log file (which gets lines, never control codes).
 *
 * Tested in test/unit/cli/progress.test.ts (a bar redrawn on a TTY, lines only on a pipe).
 */

/** True when `out` is a terminal a person watches (not a pipe, a file or journald). */
export function isInteractive(out: NodeJS.WriteStream = process.stdout): boolean {
  return out.isTTY === true && process.env.TERM !== 'dumb';
}

/**
 * Replaces what is on the screen with `text` (cursor home, clear the screen, write): a view that
 * changes (`fleet --watch`) stays in place instead of scrolling copies of itself. Only for a TTY.
 */
export function redrawScreen(text: string, out: NodeJS.WriteStream = process.stdout): void {
  out.write(`\x1b[H\x1b[2J${text.endsWith('\n') ? text : `${text}\n`}`);
}
