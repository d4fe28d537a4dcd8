// The R30x serial suite over serialport's mock binding: the real SerialTransport and serialport
// stream on the host end, no tty needed (the same suite runs over a socat pty in
// test/integration/drivers-r30x-pty.test.ts where socat exists).
import { mockLine } from '../transport/serial-lines.js';
import { r30xSerialSuite } from './r30x-serial-suite.js';

r30xSerialSuite('over @serialport/binding-mock', mockLine);
