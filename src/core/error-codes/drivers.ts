/**
 * The hardware's codes: transports (`TRANSPORT_…`: serial ports, HID nodes) and drivers (`DRIVER_…`: frames,
 * checksums, presses). A device's own status is not here: `DRIVER_R30X_…`, `DRIVER_GT521_…` and
 * `DRIVER_IRIS_…` keep the device's names (`DeviceStatusCode` in ../error-codes.ts).
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const DRIVERS_CODES = layerCodes('drivers', {
  DRIVER_BAD_ARGUMENT: { retryable: false, hint: 'use 9600, 19200, 38400, 57600 or 115200' },
  DRIVER_BAD_PARAM: {
    retryable: false,
    hint: "a value out of the scanner's range was asked for: see the message for the accepted values",
  },
  DRIVER_BAD_TEMPLATE: {
    retryable: false,
    hint: 'only templates made by a module of the same family can be stored on it',
  },
  DRIVER_BUSY: { retryable: true, hint: 'Wait for it or stop it first.' },
  DRIVER_CHECKSUM: {
    retryable: true,
    hint: 'noise on the line or a wrong baud rate: check the cable and the configured baud rate',
  },
  DRIVER_CLOSED: { retryable: false, hint: 'the scanner was closed; the agent reopens it, or restart the command' },
  DRIVER_FINGER_NOT_LIFTED: { retryable: true, hint: 'lift the finger between presses, then press again' },
  DRIVER_FRAME: {
    retryable: false,
    hint: 'the device answered something that is not its protocol: check the scanner family and the baud rate',
  },
  DRIVER_LOW_QUALITY: { retryable: true, hint: 'clean the sensor and the finger, press flat, and capture again' },
  DRIVER_NOT_OPEN: { retryable: false, hint: 'Call open() first.' },
  DRIVER_NO_CARD: { retryable: true, hint: 'hold the card over the reader' },
  DRIVER_NO_FINGER: { retryable: true, hint: 'place the finger flat on the sensor when the light asks for it' },
  DRIVER_PROTOCOL: {
    retryable: false,
    hint: 'the device on this port may not be an R30x module; run "edge-agent devices" to identify it',
  },
  DRIVER_SEQUENCE: { retryable: true, hint: 'Reports were lost on the USB link; check the cable and the hub.' },
  DRIVER_SIM_UNKNOWN_FAULT: {
    retryable: false,
    hint: "use one of the simulator's fault names (edge-agent simulate --help)",
  },
  DRIVER_TEMPLATE_FORMAT: { retryable: false, hint: 'enrol the person on this kind of module, or use host matching' },
  DRIVER_TIMEOUT: {
    retryable: true,
    hint: 'check that the scanner is powered and wired (TX/RX crossed) and that the baud rate matches',
  },
  DRIVER_UNKNOWN_FAMILY: {
    retryable: false,
    hint: 'use r30x, gt521, iris-hid, badge-serial or badge-hid; "edge-agent devices" tells which scanner is attached',
  },
  DRIVER_UNSUPPORTED: {
    retryable: false,
    hint: 'this scanner cannot do that: check its capabilities (edge-agent devices)',
  },
  TRANSPORT_BUSY: {
    retryable: true,
    hint: 'another program holds the device (the running agent, another edge-agent command, a serial console): stop it or let it do the work',
  },
  TRANSPORT_CLOSED: { retryable: false, hint: 'open the transport before using it' },
  TRANSPORT_DISCONNECTED: {
    retryable: true,
    hint: 'check the cable and the module power; the agent reconnects by itself when the device is back',
  },
  TRANSPORT_IO: {
    retryable: true,
    hint: 'the device is there but did not take the report: check it is the expected device and firmware',
  },
  TRANSPORT_NOT_FOUND: {
    retryable: true,
    hint: 'check the cable and the path; run "edge-agent devices" to list what is attached',
  },
  TRANSPORT_OPEN_FAILED: {
    retryable: false,
    hint: 'check that no other program holds the device (the agent itself, a serial console) and that it is attached',
  },
  TRANSPORT_PERMISSION: {
    retryable: false,
    hint: 'give the agent user the device: add it to the dialout group (serial) or install the udev rules (edge-agent install-service)',
  },
});
