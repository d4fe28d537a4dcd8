/**
 * The `edge-agent …` command lines of README.md and docs/ (code blocks, with `\` continuations
 * joined and comments left out, and inline code), for the tests that run the docs as written.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.js';

export interface DocLine {
  doc: string;
  line: number;
  /** The words after `edge-agent`. */
  words: string[];
  text: string;
  /** A synopsis or a mention in prose: checked for known commands and flags, not parsed whole. */
  synopsis: boolean;
  /** Inline code in prose rather than a line of a code block. */
  inline: boolean;
  /** What a shell line gives it on stdin (`echo 'x' | edge-agent …`). */
  input?: string;
}

/** Words as a POSIX shell splits them (quotes removed, `$VAR` kept as written). */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (const c of text) {
    if (quote) {
      if (c === quote) quote = null;
      else word = (word ?? '') + c;
    } else if (c === '"' || c === "'") {
      quote = c;
      word ??= '';
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else word = (word ?? '') + c;
  }
  if (word !== null) words.push(word);
  return words;
}

/** The text before a shell comment (` # …` outside quotes). */
function withoutComment(text: string): string {
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) return text.slice(0, i).trimEnd();
  }
  return text;
}

/** Not commands: words that begin with "edge-agent" in prose (an HKDF info string, a log line). */
const NOT_COMMANDS = [/^edge-agent badge credential v1$/, /^edge-agent running:/];

function docLine(doc: string, line: number, raw: string, inline: boolean): DocLine | null {
  const text = raw.replace(/\s+/g, ' ').trim();
  if (NOT_COMMANDS.some((re) => re.test(text))) return null;
  let input: string | undefined;
  let command = text.replace(/^(\$ |sudo )+/, '');
  const piped = /^echo (.+?) \| (edge-agent .*)$/.exec(command);
  if (piped) {
    input = `${shellWords(piped[1]!).join(' ')}\n`;
    command = piped[2]!;
  }
  if (!command.startsWith('edge-agent ')) return null;
  const rest = command.slice('edge-agent '.length);
  const synopsis = inline || /[[\]<>|]|\.\.\.|…/.test(rest.replace(/"[^"]*"|'[^']*'/g, ''));
  return { doc, line, words: shellWords(rest), text: command, synopsis, inline, ...(input !== undefined ? { input } : {}) };
}

/** Every command line of README.md and docs/*.md. */
export function docLines(): DocLine[] {
  const docs = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const out: DocLine[] = [];
  for (const doc of docs) {
    const lines = readFileSync(join(ROOT, doc), 'utf8').split('\n');
    let fence = false;
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i]!;
      if (/^\s*```/.test(l)) {
        fence = !fence;
        continue;
      }
      if (fence) {
        let joined = withoutComment(l);
        const at = i + 1;
        while (joined.endsWith('\\') && i + 1 < lines.length) joined = `${joined.slice(0, -1)} ${withoutComment(lines[++i]!)}`;
        const found = docLine(doc, at, joined, false);
        if (found) out.push(found);
        continue;
      }
      // Inline code, which may run on over the next line of the paragraph.
      const para = i + 1 < lines.length && !/^\s*```/.test(lines[i + 1]!) ? `${l}\n${lines[i + 1]}` : l;
      for (const m of l.matchAll(/`(edge-agent [^`]*)(`?)/g)) {
        let span = m[1]!;
        if (!m[2]) {
          const whole = /`(edge-agent [^`]*)`/.exec(para.slice(m.index));
          if (!whole) continue;
          span = whole[1]!;
        }
        const found = docLine(doc, i + 1, span, true);
        if (found) out.push(found);
      }
    }
  }
  return out;
}

/** The words of the first code-block line of `doc` that starts `edge-agent <prefix>`. */
export function docCommand(doc: string, prefix: string): string[] {
  const found = docLines().find((l) => l.doc === doc && !l.inline && l.text.startsWith(`edge-agent ${prefix}`));
  if (!found) throw new Error(`${doc} has no code-block line "edge-agent ${prefix}…"`);
  return found.words;
}
