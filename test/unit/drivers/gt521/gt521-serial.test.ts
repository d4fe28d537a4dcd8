// The GT-521 serial suite over serialport's mock binding: the real SerialTransport and serialport
// stream on the host end, no tty needed (the same suite runs over a socat pty in
// test/integration/drivers-gt521-pty.test.ts where socat exists).
import { mockLine } from '../transport/serial-lines.js';
import { gt521SerialSuite } from './gt521-serial-suite.js';

gt521SerialSuite('over @serialport/binding-mock', mockLine);
