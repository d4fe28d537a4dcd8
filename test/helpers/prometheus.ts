/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for tests of `/metrics`:
 * anything a Prometheus server would refuse, or that the format leaves out, throws with the line.
 *
 * - `# HELP name text` and `# TYPE name counter|gauge|histogram|summary|untyped`, each at most
 *   once per family and before its samples; the samples of a family are contiguous;
 * - a sample is `name{label="value",...} value [timestamp]`: names as the format allows them,
 *   label values with only the escapes \\ \" \n, values as Go's ParseFloat reads them (NaN,
 *   +Inf, -Inf included);
 * - no series twice (same name and labels), no label twice in one sample;
 * - the text ends with a newline; blank lines are skipped (prom-client puts one between
 *   families, and Prometheus ignores them); any other line, other comments included, is refused.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string | null;
  help: string | null;
  samples: Sample[];
}

const METRIC = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const FLOAT = /^[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|Inf|NaN)$/;

/** The family a sample belongs to (histogram and summary samples carry suffixes). */
function familyOf(name: string, families: Map<string, Family>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const base = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && ['histogram', 'summary'].includes(families.get(base)?.type ?? '')) return base;
  }
  return name;
}

function parseLabels(text: string, line: number): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`line ${line}: a label without =`);
    const name = text.slice(i, eq);
    if (!LABEL.test(name)) throw new Error(`line ${line}: bad label name ${JSON.stringify(name)}`);
    if (name in labels) throw new Error(`line ${line}: label ${name} twice`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label ${name}'s value is not quoted`);
    let j = eq + 2;
    let value = '';
    for (;;) {
      if (j >= text.length) throw new Error(`line ${line}: unterminated label value`);
      const c = text[j]!;
      if (c === '"') break;
      if (c === '\\') {
        const e = text[j + 1];
        if (e === '\\') value += '\\';
        else if (e === '"') value += '"';
        else if (e === 'n') value += '\n';
        else throw new Error(`line ${line}: bad escape \\${e ?? ''}`);
        j += 2;
        continue;
      }
      if (c === '\n') throw new Error(`line ${line}: a raw newline in a label value`);
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (i < text.length) {
      if (text[i] !== ',') throw new Error(`line ${line}: expected , between labels`);
      i++;
    }
  }
  return labels;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const closed = new Set<string>();
  let currentFamily: string | null = null;
  const family = (name: string): Family => {
    let f = families.get(name);
    if (!f) {
      f = { name, type: null, help: null, samples: [] };
      families.set(name, f);
    }
    return f;
  };
  const enter = (name: string, line: number) => {
    if (currentFamily !== name) {
      if (closed.has(name)) throw new Error(`line ${line}: family ${name} appears again after another family`);
      if (currentFamily) closed.add(currentFamily);
      currentFamily = name;
    }
  };
  text
    .slice(0, -1)
    .split('\n')
    .forEach((raw, idx) => {
      const line = idx + 1;
      if (raw === '') return;
      if (raw.startsWith('#')) {
        const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
        if (!m) throw new Error(`line ${line}: a comment that is not HELP or TYPE: ${raw}`);
        const [, kind, name, rest] = m as unknown as [string, string, string, string];
        if (!METRIC.test(name)) throw new Error(`line ${line}: bad metric name ${name}`);
        enter(name, line);
        const f = family(name);
        if (kind === 'HELP') {
          if (f.help !== null) throw new Error(`line ${line}: HELP twice for ${name}`);
          if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) throw new Error(`line ${line}: bad escape in HELP`);
          f.help = rest;
        } else {
          if (f.type !== null) throw new Error(`line ${line}: TYPE twice for ${name}`);
          if (f.samples.length) throw new Error(`line ${line}: TYPE after samples of ${name}`);
          if (!TYPES.has(rest)) throw new Error(`line ${line}: unknown type ${rest}`);
          f.type = rest;
        }
        return;
      }
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$/.exec(raw);
      if (!m) throw new Error(`line ${line}: not a sample: ${JSON.stringify(raw)}`);
      const [, name, labelText, valueText] = m as unknown as [string, string, string | undefined, string];
      if (!FLOAT.test(valueText)) throw new Error(`line ${line}: not a number: ${valueText}`);
      const labels = labelText ? parseLabels(labelText, line) : {};
      const key = `${name}{${Object.entries(labels)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')}}`;
      if (seen.has(key)) throw new Error(`line ${line}: series ${key} twice`);
      seen.add(key);
      const fname = familyOf(name, families);
      enter(fname, line);
      const value = valueText === '+Inf' || valueText === 'Inf' ? Infinity : valueText === '-Inf' ? -Infinity : Number(valueText);
      family(fname).samples.push({ name, labels, value });
    });
  return families;
}
