// The GT-521 serial suite over serialport's mock binding: the real SerialTransport and serialport
// stream on the host end, no tty needed (the same suite runs over a socat pty in
// test/integration/drivers-gt521-pty.test.ts where socat exists).
//
// Tests: drivers/gt521/scanner.ts, drivers/gt521/driver.ts, drivers/gt521/probe.ts and drivers/gt521/simulator.ts
// over a serial line (gt521-serial.contract.ts).
import { mockLine } from '../transport/serial-lines.fixture.js';
import { gt521SerialSuite } from './gt521-serial.contract.js';

gt521SerialSuite('over @serialport/binding-mock', mockLine);
