/**
 * R30x instruction codes, system parameters and confirmation codes (ZFM-20/70 user manuals,
 * R503 user manual 1.2). Every confirmation code has a name, a message and a hint; `statusError`
 * turns one into an `AgentError` `DRIVER_R30X_<NAME>` keeping the device's number and name.
 *
 * Tested in test/unit/drivers/r30x/commands.test.ts (instruction codes and parameters) and
 * test/unit/drivers/r30x/driver.test.ts (every confirmation code named, the device number kept).
 */
import { AgentError } from '../../src/core/errors.js';

export const Instruction = {
  GenImg: 0x01,
  Img2Tz: 0x02,
  Match: 0x03,
  Search: 0x04,
  RegModel: 0x05,
  Store: 0x06,
  LoadChar: 0x07,
  UpChar: 0x08,
  DownChar: 0x09,
  UpImage: 0x0a,
  DownImage: 0x0b,
  DeletChar: 0x0c,
  Empty: 0x0d,
  WriteReg: 0x0e,
  ReadSysPara: 0x0f,
  SetPwd: 0x12,
  VfyPwd: 0x13,
  HiSpeedSearch: 0x1b,
  TemplateNum: 0x1d,
  ReadIndexTable: 0x1f,
  AuraLedConfig: 0x35,
  ReadProdInfo: 0x3c,
} as const;
export type InstructionName = keyof typeof Instruction;

export const INSTRUCTION_NAMES: ReadonlyMap<number, InstructionName> = new Map(
  Object.entries(Instruction).map(([k, v]) => [v, k as InstructionName]),
);

/** WriteReg register numbers. */
export const Register = { baud: 4, securityLevel: 5, packetSize: 6 } as const;
/** Packet size codes 0..3 → bytes. */
export const PACKET_SIZES = [32, 64, 128, 256] as const;
/** The image the sensor takes, sent 4 bits a pixel by UpImage. */
export const IMAGE_WIDTH = 256;
export const IMAGE_HEIGHT = 288;
export const IMAGE_BYTES = (IMAGE_WIDTH * IMAGE_HEIGHT) / 2;
/** Character file / template size in a CharBuffer. */
export const CHAR_FILE_BYTES = 512;
/** Status register bits. */
export const Status = { busy: 1, pass: 2, passwordVerified: 4, imageValid: 8 } as const;

/** R503 LED (AuraLedConfig) control codes and colours. */
export const LedControl = { breathing: 1, flashing: 2, on: 3, off: 4, fadeIn: 5, fadeOut: 6 } as const;
export const LedColor = { red: 1, blue: 2, purple: 3, green: 4, yellow: 5, cyan: 6, white: 7 } as const;

interface StatusInfo {
  name: string;
  message: string;
  hint: string;
  retryable?: boolean;
}

const PLACE_FINGER = 'ask the person to place the finger flat on the sensor and try again';
const CHECK_LINE = 'check the wiring and the baud rate; the command is retried automatically';

export const CONFIRMATION_CODES: ReadonlyMap<number, StatusInfo> = new Map<number, StatusInfo>([
  [0x01, { name: 'PACKET_RECEIVE_ERROR', message: 'the module could not receive the packet', hint: CHECK_LINE, retryable: true }],
  [0x02, { name: 'NO_FINGER', message: 'no finger on the sensor', hint: PLACE_FINGER, retryable: true }],
  [0x03, { name: 'IMAGE_FAILED', message: 'the module failed to take an image of the finger', hint: PLACE_FINGER, retryable: true }],
  [
    0x06,
    {
      name: 'IMAGE_DISORDERLY',
      message: 'the fingerprint image is too disorderly to extract features',
      hint: 'clean the sensor and the finger, press flat and try again',
      retryable: true,
    },
  ],
  [
    0x07,
    {
      name: 'TOO_FEW_FEATURES',
      message: 'too few features in the fingerprint image (image too small or faint)',
      hint: 'press the finger more firmly and cover the whole sensor',
      retryable: true,
    },
  ],
  [0x08, { name: 'NO_MATCH', message: 'the two fingerprints do not match', hint: 'use the same finger for every step', retryable: true }],
  [
    0x09,
    {
      name: 'NOT_FOUND',
      message: 'no matching fingerprint in the module library',
      hint: 'the person is not enrolled on this module; enrol them or sync the templates',
    },
  ],
  [
    0x0a,
    {
      name: 'COMBINE_FAILED',
      message: 'the module could not combine the character files into a template',
      hint: 'the presses came from different fingers or were poor; restart enrolment with the same finger',
      retryable: true,
    },
  ],
  [
    0x0b,
    {
      name: 'BAD_LOCATION',
      message: 'the template slot is beyond the module library',
      hint: 'use a slot below the capacity reported by "edge-agent devices"',
    },
  ],
  [
    0x0c,
    {
      name: 'TEMPLATE_INVALID',
      message: 'the template in that slot could not be read or is invalid',
      hint: 'the slot is empty or corrupt; store the template again',
    },
  ],
  [0x0d, { name: 'UPLOAD_TEMPLATE_FAILED', message: 'the module failed to upload the template', hint: CHECK_LINE, retryable: true }],
  [
    0x0e,
    { name: 'DATA_RECEIVE_FAILED', message: 'the module cannot receive the following data packets', hint: CHECK_LINE, retryable: true },
  ],
  [0x0f, { name: 'UPLOAD_IMAGE_FAILED', message: 'the module failed to upload the image', hint: CHECK_LINE, retryable: true }],
  [
    0x10,
    {
      name: 'DELETE_FAILED',
      message: 'the module failed to delete the template',
      hint: 'try again; if it persists the module flash may be worn out',
      retryable: true,
    },
  ],
  [
    0x11,
    {
      name: 'CLEAR_FAILED',
      message: 'the module failed to clear its library',
      hint: 'try again; if it persists the module flash may be worn out',
      retryable: true,
    },
  ],
  [
    0x13,
    {
      name: 'WRONG_PASSWORD',
      message: 'the module refused the handshake password',
      hint: 'set the module password in the scanner configuration (scanner.password)',
    },
  ],
  [
    0x15,
    {
      name: 'NO_VALID_IMAGE',
      message: 'there is no valid image in the module image buffer',
      hint: 'capture an image (finger on the sensor) before this step',
      retryable: true,
    },
  ],
  [
    0x18,
    {
      name: 'FLASH_WRITE_FAILED',
      message: 'the module failed to write its flash',
      hint: 'try again; if it persists replace the module',
      retryable: true,
    },
  ],
  [0x19, { name: 'UNDEFINED_ERROR', message: 'the module reported an undefined error', hint: 'power-cycle the module', retryable: true }],
  [0x1a, { name: 'INVALID_REGISTER', message: 'invalid register number', hint: 'this module does not have that setting' }],
  [
    0x1b,
    {
      name: 'BAD_REGISTER_VALUE',
      message: 'invalid value for the register',
      hint: 'use a value the module supports (baud 9600×N, security level 1..5, packet size 32/64/128/256)',
    },
  ],
  [0x1c, { name: 'BAD_NOTEPAD_PAGE', message: 'wrong notepad page number', hint: 'use a page 0..15' }],
  [
    0x1d,
    {
      name: 'PORT_FAILED',
      message: 'the module failed to operate its communication port',
      hint: 'power-cycle the module',
      retryable: true,
    },
  ],
  [0x1f, { name: 'LIBRARY_FULL', message: 'the module library is full', hint: 'delete unused templates or use host matching' }],
  [
    0x20,
    {
      name: 'BAD_ADDRESS',
      message: 'the module address is incorrect',
      hint: 'set the module address in the scanner configuration (scanner.address)',
    },
  ],
  [
    0x21,
    {
      name: 'PASSWORD_REQUIRED',
      message: 'the module requires the handshake password first',
      hint: 'set the module password in the scanner configuration (scanner.password)',
    },
  ],
  [0x22, { name: 'TEMPLATE_EMPTY', message: 'the fingerprint template is empty', hint: 'capture or load a template before this step' }],
  [0x24, { name: 'LIBRARY_EMPTY', message: 'the module library is empty', hint: 'enrol or sync templates to the module' }],
  [0x26, { name: 'TIMEOUT', message: 'the module timed out waiting for the finger', hint: PLACE_FINGER, retryable: true }],
  [0x27, { name: 'ALREADY_EXISTS', message: 'the fingerprint is already enrolled', hint: 'the person is already enrolled on this module' }],
  [
    0x29,
    {
      name: 'SENSOR_HARDWARE_ERROR',
      message: 'the sensor reported a hardware error',
      hint: 'power-cycle the module; replace it if it persists',
    },
  ],
  [
    0xfc,
    {
      name: 'UNSUPPORTED_COMMAND',
      message: 'the module does not support this command',
      hint: 'this module model lacks the feature; the agent works without it',
    },
  ],
  [
    0xfd,
    { name: 'HARDWARE_ERROR', message: 'the module reported a hardware error', hint: 'power-cycle the module; replace it if it persists' },
  ],
  [
    0xfe,
    {
      name: 'COMMAND_FAILED',
      message: 'the module failed to execute the command',
      hint: 'try again; power-cycle the module if it persists',
      retryable: true,
    },
  ],
]);

export function statusName(code: number): string {
  return CONFIRMATION_CODES.get(code)?.name ?? `UNKNOWN_0x${code.toString(16).padStart(2, '0')}`;
}

/** The AgentError for a non-zero confirmation code: `DRIVER_R30X_<NAME>`. */
export function statusError(code: number, instruction: number, context: Record<string, unknown> = {}): AgentError {
  const info = CONFIRMATION_CODES.get(code);
  const name = statusName(code);
  const op = INSTRUCTION_NAMES.get(instruction) ?? `0x${instruction.toString(16)}`;
  return new AgentError(
    `DRIVER_R30X_${info ? name : 'UNKNOWN_STATUS'}`,
    `${op}: ${info?.message ?? `the module answered with unknown confirmation code 0x${code.toString(16)}`}`,
    { deviceCode: code, deviceName: name, instruction: op, ...context },
    {
      hint: info?.hint ?? 'power-cycle the module; if it persists, check the model is an R30x/ZFM/AS608',
      retryable: info?.retryable ?? false,
    },
  );
}
