/**
 * The operations console's codes (`CONSOLE_…`): its port, TLS, login, requests.
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const CONSOLE_CODES = layerCodes('console', {
  CONSOLE_ASSETS_MISSING: {
    retryable: false,
    hint: 'the console\'s page files are missing: run "npm run build" (it copies src/console/assets into dist) or reinstall edge-agent',
  },
  CONSOLE_BAD_PASSWORD: {
    retryable: false,
    hint: 'write consolePassword in the secrets file as the hash "edge-agent console --hash-password" prints (or the password itself, at least 8 characters)',
  },
  CONSOLE_BAD_REQUEST: {
    retryable: false,
    hint: 'send JSON {"args": {...}} with Content-Type: application/json (the console page does this)',
  },
  CONSOLE_COMMANDS_OFF: {
    retryable: false,
    hint: 'commands need a console login (consolePassword in the secrets file) and an ops key (opsKey, opsKeys.<id> or --key-file)',
  },
  CONSOLE_FORBIDDEN_ORIGIN: {
    retryable: false,
    hint: "send it from the console's own page; behind a reverse proxy, add its origin to console.allowedOrigins",
  },
  CONSOLE_LISTEN: { retryable: false, hint: 'choose another --port (or console.port), or stop what listens there' },
  CONSOLE_LOGIN_FAILED: {
    retryable: false,
    hint: "check the password; it is consolePassword in the console's secrets file",
  },
  CONSOLE_LOGIN_REQUIRED: { retryable: false, hint: "log in on the console's /login page" },
  CONSOLE_LOGIN_THROTTLED: { retryable: true, hint: 'too many failed logins from this address: wait a minute' },
  CONSOLE_NOT_FOUND: { retryable: false, hint: "open the console's start page (/) and follow its links" },
  CONSOLE_TLS_UNREADABLE: {
    retryable: false,
    hint: 'check console.tls.cert and console.tls.key in the config and that this user may read them',
  },
  CONSOLE_UNSAFE_HOST: {
    retryable: false,
    hint: 'set consolePassword in the secrets file (edge-agent console --hash-password makes the hash) before listening beyond loopback, or keep --host 127.0.0.1 and use an SSH tunnel',
  },
});
