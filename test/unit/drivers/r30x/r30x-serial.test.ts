// The R30x serial suite over serialport's mock binding: the real SerialTransport and serialport
// stream on the host end, no tty needed (the same suite runs over a socat pty in
// test/integration/drivers-r30x-pty.test.ts where socat exists).
//
// Tests: drivers/r30x/scanner.ts and drivers/r30x/simulator.ts over a serial line (r30x-serial.contract.ts).
import { mockLine } from '../transport/serial-lines.fixture.js';
import { r30xSerialSuite } from './r30x-serial.contract.js';

r30xSerialSuite('over @serialport/binding-mock', mockLine);
