// The serial badge reader suite over serialport's mock binding: the real SerialTransport,
// serialport's stream and @serialport/parser-readline on the host end, no tty needed (the same
// suite runs over a socat pty in test/integration/drivers-badge-pty.test.ts where socat exists).
import { mockLine } from '../transport/serial-lines.fixture.js';
import { badgeSerialSuite } from './serial-reader.contract.js';

badgeSerialSuite('over @serialport/binding-mock', mockLine);
