// The GT-521 driver against its simulator over a real pseudo-terminal pair made by socat: every
// command, the discovery probe, paced transfers, an unplug in the middle of GetImage, the tty's
// chunking and reconnecting — the suite that also runs over serialport's mock binding
// (test/unit/drivers/gt521/gt521-serial.test.ts).
import { describe } from 'vitest';
import { has } from '../helpers/system.js';
import { ptyLine } from '../unit/drivers/transport/serial-lines.fixture.js';
import { gt521SerialSuite } from '../unit/drivers/gt521/gt521-serial.contract.js';

describe.skipIf(!has('socat'))('GT-521 over a real pty (needs socat)', () => {
  gt521SerialSuite('over a socat pty', ptyLine);
});
