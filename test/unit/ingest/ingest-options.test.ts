/** The topics an ingest derives from the prefix. */
import { describe, expect, it } from 'vitest';
import { defaultDeadLetterTopic, eventsFilter, INGEST_DEFAULTS } from '../../../src/ingest/ingest-options.js';

describe('ingest options', () => {
  it("subscribes to every terminal's events, shared in the group unless told not to", () => {
    expect(eventsFilter('attendance', 'edge-agent-ingest')).toBe('$share/edge-agent-ingest/attendance/+/+/events');
    expect(eventsFilter('attendance/', null)).toBe('attendance/+/+/events');
    expect(eventsFilter('a/b//', 'g')).toBe('$share/g/a/b/+/+/events');
  });

  it('publishes dead letters under the prefix unless configured', () => {
    expect(defaultDeadLetterTopic('attendance')).toBe('attendance/ingest/dead-letters');
    expect(defaultDeadLetterTopic('site/x/')).toBe('site/x/ingest/dead-letters');
  });

  it('defaults to a shared group, persistent sessions of a week and batches of 500', () => {
    expect(INGEST_DEFAULTS).toMatchObject({ group: 'edge-agent-ingest', sessionExpirySec: 604_800, batchSize: 500, protocol: 'auto' });
  });
});
