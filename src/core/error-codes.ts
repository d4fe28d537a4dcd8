/**
 * Every error code of the agent and the service in one table: the layer it belongs to, whether
 * doing the same thing again later can succeed (the default when the thrower does not say), and
 * the hint a person gets when the thrower has no more specific one. Each layer writes its codes
 * in its own file, `error-codes/<layer>.ts`; this module joins them. `ErrorCode` is the union of
 * their names, so `new AgentError('…')` and every `err.code === '…'` are checked by the compiler.
 *
 * Device status codes keep the device's own names: `DRIVER_R30X_<confirmation code name>`,
 * `DRIVER_GT521_<NACK name>` and `DRIVER_IRIS_<status name>` come from the drivers' status tables,
 * and `SQLITE_<result code>` from SQLite's (see `DeviceStatusCode` and `src/core/sqlite.ts`).
 *
 * Tested in test/unit/core/error-codes.test.ts (the layers' tables joined, each code once) and
 * test/unit/core/errors.test.ts (every code has a layer and a hint; codes from a wire are checked
 * against the table).
 */
import { API_CODES } from './error-codes/api.js';
import { BIOMETRICS_CODES } from './error-codes/biometrics.js';
import { CLI_CODES } from './error-codes/cli.js';
import { CONFIG_CODES } from './error-codes/config.js';
import { CONSOLE_CODES } from './error-codes/console.js';
import { CORE_CODES } from './error-codes/core.js';
import { DAEMON_CODES } from './error-codes/daemon.js';
import { DRIVERS_CODES } from './error-codes/drivers.js';
import { INGEST_CODES } from './error-codes/ingest.js';
import type { ErrorCodeInfo } from './error-codes/layer-codes.js';
import { OPS_CODES } from './error-codes/ops.js';
import { SERVER_CODES } from './error-codes/server.js';
import { SETUP_CODES } from './error-codes/setup.js';
import { SITE_SYNC_CODES } from './error-codes/site-sync.js';
import { STORE_CODES } from './error-codes/store.js';
import { TERMINAL_CODES } from './error-codes/terminal.js';
import { UPLOAD_CODES } from './error-codes/upload.js';

export type { ErrorCodeInfo, ErrorLayer } from './error-codes/layer-codes.js';

/** The layers' tables (`error-codes/<layer>.ts`), from the bottom of the layers up; a code is in one of them. */
export const LAYER_TABLES = [
  CORE_CODES,
  DRIVERS_CODES,
  API_CODES,
  STORE_CODES,
  BIOMETRICS_CODES,
  CONFIG_CODES,
  UPLOAD_CODES,
  OPS_CODES,
  SITE_SYNC_CODES,
  INGEST_CODES,
  SERVER_CODES,
  TERMINAL_CODES,
  DAEMON_CODES,
  CONSOLE_CODES,
  SETUP_CODES,
  CLI_CODES,
] as const;

type Joined<T> = (T extends unknown ? (t: T) => void : never) extends (t: infer All) => void ? All : never;

/** Every code with its layer, retryability and hint. */
export const ERROR_CODES: Joined<(typeof LAYER_TABLES)[number]> = Object.assign({}, ...LAYER_TABLES);

/** A device's (or SQLite's) own status, named after its status table. */
export type DeviceStatusCode = `DRIVER_R30X_${string}` | `DRIVER_GT521_${string}` | `DRIVER_IRIS_${string}` | `SQLITE_${string}`;

export type ErrorCode = keyof typeof ERROR_CODES | DeviceStatusCode;

const DEVICE_STATUS: ErrorCodeInfo = {
  layer: 'drivers',
  retryable: false,
  hint: "see the device's status in the message; power-cycle the device if it persists",
};
const SQLITE_STATUS: ErrorCodeInfo = {
  layer: 'store',
  retryable: false,
  hint: 'run "edge-agent doctor": it checks the database, the data folder and the disk',
};
const STATUS_CODE = /^(DRIVER_(R30X|GT521|IRIS)|SQLITE)_[A-Z0-9_]+$/;

/** True for a name of the table or a device status code (for codes that arrive over a wire). */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && (Object.hasOwn(ERROR_CODES, code) || STATUS_CODE.test(code));
}

export function errorCodeInfo(code: ErrorCode): ErrorCodeInfo {
  if (Object.hasOwn(ERROR_CODES, code)) return ERROR_CODES[code as keyof typeof ERROR_CODES];
  return code.startsWith('SQLITE_') ? SQLITE_STATUS : DEVICE_STATUS;
}
