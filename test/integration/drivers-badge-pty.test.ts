// The serial badge reader and its simulator over a real pseudo-terminal pair made by socat: every
// line format, a card held in the field, the fault switches and an unplug, with the tty's own
// chunking — the suite that also runs over serialport's mock binding
// (test/unit/drivers/badge/serial-reader.test.ts).
import { describe } from 'vitest';
import { has } from '../helpers/system.js';
import { ptyLine } from '../unit/drivers/transport/serial-lines.fixture.js';
import { badgeSerialSuite } from '../unit/drivers/badge/serial-reader.contract.js';

describe.skipIf(!has('socat'))('serial badge reader over a real pty (needs socat)', () => {
  badgeSerialSuite('over a socat pty', ptyLine);
});
