import { describe, expect, it } from 'vitest';
import { decodeTopicPart, encodeTopicPart, parseTerminalTopic } from '../../../src/ops/topics.js';

describe('topics', () => {
  it('round-trips reserved characters in employee codes', () => {
    for (const code of ['E/1', 'a+b', '#7', '100%']) expect(decodeTopicPart(encodeTopicPart(code))).toBe(code);
    expect(encodeTopicPart('E/1')).not.toContain('/');
  });
  it('parses terminal topics and ignores the site template topics', () => {
    expect(parseTerminalTopic('att', 'att/s1/t1/state')).toEqual({ site: 's1', terminal: 't1', leaf: 'state' });
    expect(parseTerminalTopic('att', 'att/s1/templates/E1')).toBeNull();
    expect(parseTerminalTopic('att', 'other/s1/t1/state')).toBeNull();
  });
});
