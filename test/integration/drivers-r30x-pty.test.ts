// The R30x driver and simulator over a real pseudo-terminal made by socat: every command, a paced
// transfer, a baud switch, unplugging in the middle of UpImage and reconnecting — the suite that
// also runs over serialport's mock binding (test/unit/drivers/r30x/r30x-serial.test.ts).
import { describe } from 'vitest';
import { has } from '../helpers/system.js';
import { ptyLine } from '../unit/drivers/transport/serial-lines.fixture.js';
import { r30xSerialSuite } from '../unit/drivers/r30x/r30x-serial.contract.js';

describe.skipIf(!has('socat'))('R30x over a real pty (needs socat)', () => {
  r30xSerialSuite('over a socat pty', ptyLine);
});
