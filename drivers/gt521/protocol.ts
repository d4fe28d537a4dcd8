/**
 * GT-521F32 / GT-521F52 (ADH-Tech) serial protocol constants, from the GT-521F programming guide.
 *
 * Packets (all multi-byte fields little-endian):
 * - command / response, 12 bytes: `55 AA` | device id u16 | parameter u32 | command or response
 *   code u16 | checksum u16. A response code is ACK (0x30) or NACK (0x31); a NACK carries the error
 *   code in the parameter.
 * - data, N + 6 bytes: `5A A5` | device id u16 | N data bytes | checksum u16. There is no length
 *   field: both ends know N from the command that announced the data.
 * The checksum is the 16-bit sum of every byte before it (start codes included).
 *
 * Tested in test/unit/drivers/gt521/codec.test.ts and test/unit/drivers/gt521/commands.test.ts (the
 * programming guide's values in packets) and test/unit/drivers/gt521/errors.test.ts (every NACK
 * code).
 */

export const CMD_START = [0x55, 0xaa] as const;
export const DATA_START = [0x5a, 0xa5] as const;
export const PACKET_SIZE = 12;
/** Bytes a data packet adds around its payload (start code 2, device id 2, checksum 2). */
export const DATA_OVERHEAD = 6;
export const DEFAULT_DEVICE_ID = 0x0001;

export const Gt521Command = {
  Open: 0x01,
  Close: 0x02,
  ChangeBaud: 0x04,
  CmosLed: 0x12,
  GetEnrollCount: 0x20,
  CheckEnrolled: 0x21,
  EnrollStart: 0x22,
  Enroll1: 0x23,
  Enroll2: 0x24,
  Enroll3: 0x25,
  IsPressFinger: 0x26,
  DeleteID: 0x40,
  DeleteAll: 0x41,
  Verify: 0x50,
  Identify: 0x51,
  VerifyTemplate: 0x52,
  IdentifyTemplate: 0x53,
  CaptureFinger: 0x60,
  MakeTemplate: 0x61,
  GetImage: 0x62,
  GetRawImage: 0x63,
  GetTemplate: 0x70,
  SetTemplate: 0x71,
} as const;
export type Gt521CommandName = keyof typeof Gt521Command;
export type Gt521CommandCode = (typeof Gt521Command)[Gt521CommandName];

export function commandName(code: number): string {
  for (const [name, c] of Object.entries(Gt521Command)) if (c === code) return name;
  return `0x${code.toString(16).padStart(2, '0')}`;
}

export const ACK = 0x30;
export const NACK = 0x31;

export interface NackInfo {
  name: string;
  /** What happened, for a person. */
  message: string;
  /** What to do about it. */
  hint: string;
  /** Trying again (another press, another moment) can succeed. */
  retryable: boolean;
}

/** Every error code a NACK can carry. Codes below 0x1000 mean "duplicated ID" (the ID itself). */
export const NACK_CODES: Readonly<Record<number, NackInfo>> = {
  0x1001: { name: 'NACK_TIMEOUT', message: 'capture timed out on the module', hint: 'Place the finger again.', retryable: true },
  0x1002: {
    name: 'NACK_INVALID_BAUDRATE',
    message: 'the module refused the baud rate',
    hint: 'Use 9600, 19200, 38400, 57600 or 115200.',
    retryable: false,
  },
  0x1003: {
    name: 'NACK_INVALID_POS',
    message: 'the slot number is outside the module database',
    hint: 'Use a slot between 0 and the module capacity minus one.',
    retryable: false,
  },
  0x1004: {
    name: 'NACK_IS_NOT_USED',
    message: 'the slot is empty',
    hint: 'Check the slot number; nothing is enrolled there.',
    retryable: false,
  },
  0x1005: {
    name: 'NACK_IS_ALREADY_USED',
    message: 'the slot already holds a template',
    hint: 'Delete the slot first or choose a free one.',
    retryable: false,
  },
  0x1006: {
    name: 'NACK_COMM_ERR',
    message: 'the module reported a communication error',
    hint: 'Check the cable and the baud rate; the command is retried.',
    retryable: true,
  },
  0x1007: {
    name: 'NACK_VERIFY_FAILED',
    message: 'the finger does not match the slot (1:1)',
    hint: 'Try again with the enrolled finger.',
    retryable: true,
  },
  0x1008: {
    name: 'NACK_IDENTIFY_FAILED',
    message: 'the finger matches no slot (1:N)',
    hint: 'The person is not enrolled on this module, or the press was poor.',
    retryable: true,
  },
  0x1009: {
    name: 'NACK_DB_IS_FULL',
    message: 'the module database is full',
    hint: 'Delete unused slots or keep templates on the host.',
    retryable: false,
  },
  0x100a: { name: 'NACK_DB_IS_EMPTY', message: 'the module database is empty', hint: 'Enrol or load templates first.', retryable: false },
  0x100b: {
    name: 'NACK_TURN_ERR',
    message: 'enrolment steps were sent out of order',
    hint: 'Restart the enrollment with EnrollStart.',
    retryable: false,
  },
  0x100c: {
    name: 'NACK_BAD_FINGER',
    message: 'the finger image is too poor to use',
    hint: 'Clean the sensor and press the finger flat, then try again.',
    retryable: true,
  },
  0x100d: {
    name: 'NACK_ENROLL_FAILED',
    message: 'enrolment failed: the three presses do not agree',
    hint: 'Restart the enrolment with the same finger for every press.',
    retryable: true,
  },
  0x100e: {
    name: 'NACK_IS_NOT_SUPPORTED',
    message: 'the module does not support this command',
    hint: 'Check the module model and firmware.',
    retryable: false,
  },
  0x100f: {
    name: 'NACK_DEV_ERR',
    message: 'the module reported a device error',
    hint: 'Power-cycle the module; replace it if it persists.',
    retryable: false,
  },
  0x1010: { name: 'NACK_CAPTURE_CANCELED', message: 'capture was cancelled', hint: 'Start the capture again.', retryable: true },
  0x1011: {
    name: 'NACK_INVALID_PARAM',
    message: 'the module refused a parameter',
    hint: 'Check the value sent (baud rate, slot, flag).',
    retryable: false,
  },
  0x1012: {
    name: 'NACK_FINGER_IS_NOT_PRESSED',
    message: 'no finger on the sensor',
    hint: 'Place a finger on the sensor and try again.',
    retryable: true,
  },
};

export const NackCode = {
  Timeout: 0x1001,
  InvalidBaudrate: 0x1002,
  InvalidPos: 0x1003,
  IsNotUsed: 0x1004,
  IsAlreadyUsed: 0x1005,
  CommErr: 0x1006,
  VerifyFailed: 0x1007,
  IdentifyFailed: 0x1008,
  DbIsFull: 0x1009,
  DbIsEmpty: 0x100a,
  TurnErr: 0x100b,
  BadFinger: 0x100c,
  EnrollFailed: 0x100d,
  IsNotSupported: 0x100e,
  DevErr: 0x100f,
  CaptureCanceled: 0x1010,
  InvalidParam: 0x1011,
  FingerIsNotPressed: 0x1012,
} as const;

export const TEMPLATE_SIZE = 498;
/** GetImage: 258 columns × 202 rows, 8 bits a pixel. */
export const IMAGE_WIDTH = 258;
export const IMAGE_HEIGHT = 202;
export const IMAGE_SIZE = IMAGE_WIDTH * IMAGE_HEIGHT; // 52116
/** GetRawImage: 160 × 120 QVGA preview, 8 bits a pixel. */
export const RAW_IMAGE_WIDTH = 160;
export const RAW_IMAGE_HEIGHT = 120;
export const RAW_IMAGE_SIZE = RAW_IMAGE_WIDTH * RAW_IMAGE_HEIGHT; // 19200
/** Open's extra-info data: firmware u32, ISO area max size u32, serial number 16 bytes. */
export const DEVINFO_SIZE = 24;

export const BAUD_RATES = [9600, 19200, 38400, 57600, 115200] as const;
export const DEFAULT_BAUD = 9600;

/** EnrollStart parameter meaning "enroll without saving; Enroll3 returns the template". */
export const ENROLL_NO_SAVE = 0xffffffff;
/** SetTemplate parameter flag: store without the duplicate check. */
export const SET_TEMPLATE_NO_DUP_CHECK = 0x00010000;

/** Model by database capacity. */
export const MODELS = [
  { model: 'GT-521F32', capacity: 200 },
  { model: 'GT-521F52', capacity: 3000 },
] as const;
