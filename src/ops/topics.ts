/**
 * The MQTT topic tree of a fleet:
 *
 *   <prefix>/<site>/<terminal>/state            retained: online | degraded | offline | lost (last will); see terminal-state.ts
 *   <prefix>/<site>/<terminal>/info             retained JSON: version, scanners, template counts, config version, clock
 *   <prefix>/<site>/<terminal>/metrics          retained JSON, every N seconds
 *   <prefix>/<site>/<terminal>/events           punches (QoS 1), see src/upload/mqtt-sink.ts
 *   <prefix>/<site>/<terminal>/req/<command>    requests: {"transaction": "...", ...arguments}
 *   <prefix>/<site>/<terminal>/res/<command>    responses: {"transaction", "status": "ok"|"error", "result"|"error"}
 *   <prefix>/<site>/templates/<employeeCode>    retained, encrypted under the site key; empty = deleted
 *
 * A terminal may not be called `templates` (it would collide with the site's template topics).
 */
export const TERMINAL_LEAVES = ['state', 'info', 'metrics', 'events'] as const;

export interface TopicBase {
  prefix: string;
  site: string;
  terminal: string;
}

export function terminalTopic(b: TopicBase, leaf: string): string {
  return `${b.prefix}/${b.site}/${b.terminal}/${leaf}`;
}

export function requestTopic(b: TopicBase, command: string): string {
  return terminalTopic(b, `req/${command}`);
}

export function responseTopic(b: TopicBase, command: string): string {
  return terminalTopic(b, `res/${command}`);
}

export function siteTemplatesTopic(prefix: string, site: string, employeeCode?: string): string {
  return `${prefix}/${site}/templates/${employeeCode === undefined ? '+' : encodeTopicPart(employeeCode)}`;
}

/** Employee codes may hold characters that MQTT topics reserve; those are percent-encoded. */
export function encodeTopicPart(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is one of the characters MQTT forbids in a topic; it must be matched to be encoded
  return s.replace(/[%/+#\u0000]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`);
}

export function decodeTopicPart(s: string): string {
  return s.replace(/%([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

export interface ParsedTerminalTopic {
  site: string;
  terminal: string;
  leaf: string;
}

/** Parses `<prefix>/<site>/<terminal>/<leaf...>`; null for anything else (templates included). */
export function parseTerminalTopic(prefix: string, topic: string): ParsedTerminalTopic | null {
  if (!topic.startsWith(`${prefix}/`)) return null;
  const parts = topic.slice(prefix.length + 1).split('/');
  if (parts.length < 3) return null;
  const [site, terminal, ...leaf] = parts;
  if (!site || !terminal || terminal === 'templates') return null;
  return { site, terminal, leaf: leaf.join('/') };
}
