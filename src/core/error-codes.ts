/**
 * Every error code of the agent and the service in one table: the layer it belongs to, whether
 * doing the same thing again later can succeed (the default when the thrower does not say), and
 * the hint a person gets when the thrower has no more specific one. `ErrorCode` is the union of
 * these names, so `new AgentError('…')` and every `err.code === '…'` are checked by the compiler.
 *
 * Device status codes keep the device's own names: `DRIVER_R30X_<confirmation code name>`,
 * `DRIVER_GT521_<NACK name>` and `DRIVER_IRIS_<status name>` come from the drivers' status tables,
 * and `SQLITE_<result code>` from SQLite's (see `DeviceStatusCode` and `src/core/sqlite.ts`).
 *
 * Tested in test/unit/core/errors.test.ts (every code has a layer and a hint; codes from a wire are
 * checked against the table).
 */
export type ErrorLayer =
  | 'core'
  | 'api'
  | 'server'
  | 'ingest'
  | 'store'
  | 'biometrics'
  | 'config'
  | 'upload'
  | 'ops'
  | 'site-sync'
  | 'terminal'
  | 'daemon'
  | 'setup'
  | 'cli'
  | 'console'
  | 'drivers'
  | 'embedded';

export interface ErrorCodeInfo {
  readonly layer: ErrorLayer;
  readonly retryable: boolean;
  readonly hint: string;
}

export const ERROR_CODES = {
  AGENT_ALREADY_RUNNING: {
    layer: 'daemon',
    retryable: false,
    hint: 'stop it first (systemctl stop edge-agent) or use another --data folder',
  },
  AGENT_BROKER_LISTEN: { layer: 'daemon', retryable: false, hint: 'choose another port or stop what uses it' },
  AGENT_CAPTURE: {
    layer: 'daemon',
    retryable: false,
    hint: 'a capture failed unexpectedly: the scanner worker goes on with the next one; check the scanner if it repeats',
  },
  AGENT_CONTROL_BAD_REQUEST: {
    layer: 'daemon',
    retryable: false,
    hint: 'send a JSON object with an action the daemon knows (edge-agent enroll or identify do this for you)',
  },
  AGENT_CONTROL_FAILED: {
    layer: 'daemon',
    retryable: false,
    hint: 'the daemon could not do it: read the message, then check "journalctl -u edge-agent"',
  },
  AGENT_CONTROL_UNKNOWN: {
    layer: 'daemon',
    retryable: false,
    hint: 'update edge-agent so the CLI and the running daemon are the same version',
  },
  AGENT_CONTROL_UNREACHABLE: { layer: 'daemon', retryable: false, hint: 'is edge-agent run running on this data folder?' },
  AGENT_FILES_MISSING: { layer: 'daemon', retryable: false, hint: 'reinstall edge-agent; the package ships systemd/edge-agent.service' },
  AGENT_NO_EXTRACTOR: {
    layer: 'daemon',
    retryable: false,
    hint: 'run "edge-agent doctor": the extraction models failed to load or the template key is missing',
  },
  AGENT_NO_SCANNER: {
    layer: 'daemon',
    retryable: false,
    hint: 'configure a scanner with --scanner family:path or in the config, then run "edge-agent doctor"',
  },
  AGENT_NO_TEMPLATE_CACHE: { layer: 'daemon', retryable: false, hint: 'set a template key (edge-agent provision) and restart' },
  AGENT_NO_TEMPLATE_KEY: {
    layer: 'daemon',
    retryable: false,
    hint: 'run "edge-agent provision" (it generates one) or put templateKey (64 hex characters) in the secrets file',
  },
  AGENT_PUNCH: {
    layer: 'daemon',
    retryable: false,
    hint: 'recording a punch failed: run "edge-agent doctor" (disk, database) and check the logs',
  },
  AGENT_SCANNER_BUSY: {
    layer: 'daemon',
    retryable: true,
    hint: 'another process holds the scanner: enrol and identify through the running agent (edge-agent enroll with its configuration goes through its control socket), or stop it first (systemctl stop edge-agent)',
  },
  AGENT_SCANNER_DISCONNECTED: {
    layer: 'daemon',
    retryable: false,
    hint: 'check the scanner cable and power; the agent reopens it by itself when it is back',
  },
  AGENT_SCANNER_OPEN: {
    layer: 'daemon',
    retryable: false,
    hint: 'the scanner could not be opened: check the cable, the path and the baud rate; the agent keeps trying',
  },
  AGENT_SCANNER_UNAVAILABLE: {
    layer: 'daemon',
    retryable: true,
    hint: 'check the cable and "edge-agent devices"; the agent reconnects by itself',
  },
  AGENT_WRITE_FAILED: {
    layer: 'daemon',
    retryable: false,
    hint: 'check that the folder exists, that the agent user may write there, and that the disk is not full',
  },
  API_AUTH_FAILED: {
    layer: 'api',
    retryable: false,
    hint: 'check api.clientId in the config and the API key and secret (edge-agent keys create makes a new pair on our service)',
  },
  API_BAD_RESPONSE: {
    layer: 'api',
    retryable: true,
    hint: 'api.url may point at something that is not the attendance service; check the URL and the service logs',
  },
  API_EMPLOYEE_CODE_INVALID: {
    layer: 'api',
    retryable: false,
    hint: 'an employee code is 1 to 64 characters, no spaces, control, bidi or zero-width characters, none of / \\ ? # %, not "." or ".."',
  },
  API_FORBIDDEN: { layer: 'api', retryable: false, hint: 'use a key with the admin role; admin-audit keys may only read' },
  API_HTTP_4XX: { layer: 'api', retryable: false, hint: 'the request does not fit this service: check api.url and api.pathForm' },
  API_HTTP_5XX: { layer: 'api', retryable: true, hint: 'a server-side problem; it is retried later; the service logs say more' },
  API_INVALID_DATE_TIME: { layer: 'api', retryable: false, hint: 'write date-times as yyyy-MM-dd HH:mm:ss, e.g. 2024-03-05 08:30:00' },
  API_NETWORK: {
    layer: 'api',
    retryable: true,
    hint: 'check api.url in the config, that the service runs, and the network; it is retried later',
  },
  API_NOT_SUPPORTED: { layer: 'api', retryable: false, hint: 'set api.pathForm to "api" to use the report' },
  API_RATE_LIMITED: { layer: 'api', retryable: true, hint: 'retried after the delay the service asked for' },
  API_TIMEOUT: {
    layer: 'api',
    retryable: true,
    hint: 'the service or the network is slow or down; it is retried later (api.timeoutMs sets the limit)',
  },
  API_UNAUTHORIZED: {
    layer: 'api',
    retryable: false,
    hint: 'check that the API key still exists on the service and that api.clientId is right',
  },
  BIOMETRICS_BAD_IMAGE: {
    layer: 'biometrics',
    retryable: false,
    hint: 'give an 8-bit grayscale PGM or PNG image of the size the scanner produces',
  },
  BIOMETRICS_BAD_MODALITY: { layer: 'biometrics', retryable: false, hint: "use 'finger' or 'iris'" },
  BIOMETRICS_EXTRACTOR_CLOSED: { layer: 'biometrics', retryable: false, hint: 'create a new extractor' },
  BIOMETRICS_EXTRACT_FAILED: {
    layer: 'biometrics',
    retryable: true,
    hint: 'the next request starts a new worker; if it keeps failing, check the models in models/',
  },
  BIOMETRICS_INDEX_CLOSED: { layer: 'biometrics', retryable: false, hint: 'the identifier was stopped; restart the agent' },
  BIOMETRICS_MODALITY_MISMATCH: { layer: 'biometrics', retryable: false, hint: 'compare two finger templates or two iris templates' },
  BIOMETRICS_MODALITY_UNSUPPORTED: { layer: 'biometrics', retryable: false, hint: 'identify with a finger or iris template' },
  BIOMETRICS_MODEL_INVALID: {
    layer: 'biometrics',
    retryable: false,
    hint: 'rebuild the bundled models with "npm run models" or fix the configured model and its tensor names',
  },
  BIOMETRICS_MODEL_MISSING: {
    layer: 'biometrics',
    retryable: false,
    hint: 'run "npm run models" to build the bundled models, or fix the configured model path',
  },
  BIOMETRICS_TEMPLATE_INVALID: {
    layer: 'biometrics',
    retryable: false,
    hint: 'the template does not fit the configured engine: enrol the person again',
  },
  BIOMETRICS_TEMPLATE_MALFORMED: {
    layer: 'biometrics',
    retryable: false,
    hint: 'the template is damaged or of another format: extract or enrol it again',
  },
  BIOMETRICS_TEMPLATE_UNKNOWN_FORMAT: {
    layer: 'biometrics',
    retryable: false,
    hint: 'give an ISO/IEC 19794-2, ANSI INCITS 378 or iris-code-v1 template',
  },
  BIOMETRICS_UNUSABLE_CAPTURE: {
    layer: 'biometrics',
    retryable: false,
    hint: 'capture again: the finger flat on the sensor, or the eye open and straight at the camera',
  },
  CLI_CONFIRM_NEEDED: { layer: 'cli', retryable: false, hint: 'add --yes to confirm' },
  CLI_DB_MISSING: { layer: 'cli', retryable: false, hint: 'check the path, or add --create to make a new database there' },
  CLI_NOT_FOUND: { layer: 'cli', retryable: false, hint: 'check the id or code (list them first)' },
  CLI_FILE_UNREADABLE: { layer: 'cli', retryable: false, hint: 'check the path and the permissions' },
  CLI_FILE_UNWRITABLE: { layer: 'cli', retryable: false, hint: 'check the directory exists, is writable and has free space' },
  CLI_IMPORT_BAD_LINE: {
    layer: 'cli',
    retryable: false,
    hint: 'each line is one JSON object: {"code":"1042","direction":"in","at":"2026-03-01 07:58:00"}',
  },
  CLI_IMPORT_UNREADABLE: { layer: 'cli', retryable: false, hint: 'check the path' },
  CLI_PAIRS_SYNTAX: { layer: 'cli', retryable: false, hint: 'write "A<TAB>B" on each line' },
  CLI_SERVICE_REFUSED: { layer: 'cli', retryable: false, hint: 'read the status code the service answered; its logs say more' },
  CLI_USAGE: { layer: 'cli', retryable: false, hint: 'run "edge-agent help <command>" for the options' },
  CONSOLE_ASSETS_MISSING: {
    layer: 'console',
    retryable: false,
    hint: 'the console\'s page files are missing: run "npm run build" (it copies src/console/assets into dist) or reinstall edge-agent',
  },
  CONSOLE_BAD_PASSWORD: {
    layer: 'console',
    retryable: false,
    hint: 'write consolePassword in the secrets file as the hash "edge-agent console --hash-password" prints (or the password itself, at least 8 characters)',
  },
  CONSOLE_BAD_REQUEST: {
    layer: 'console',
    retryable: false,
    hint: 'send JSON {"args": {...}} with Content-Type: application/json (the console page does this)',
  },
  CONSOLE_COMMANDS_OFF: {
    layer: 'console',
    retryable: false,
    hint: 'commands need a console login (consolePassword in the secrets file) and an ops key (opsKey, opsKeys.<id> or --key-file)',
  },
  CONSOLE_FORBIDDEN_ORIGIN: {
    layer: 'console',
    retryable: false,
    hint: "send it from the console's own page; behind a reverse proxy, add its origin to console.allowedOrigins",
  },
  CONSOLE_LISTEN: { layer: 'console', retryable: false, hint: 'choose another --port (or console.port), or stop what listens there' },
  CONSOLE_LOGIN_FAILED: {
    layer: 'console',
    retryable: false,
    hint: "check the password; it is consolePassword in the console's secrets file",
  },
  CONSOLE_LOGIN_REQUIRED: { layer: 'console', retryable: false, hint: "log in on the console's /login page" },
  CONSOLE_LOGIN_THROTTLED: { layer: 'console', retryable: true, hint: 'too many failed logins from this address: wait a minute' },
  CONSOLE_NOT_FOUND: { layer: 'console', retryable: false, hint: "open the console's start page (/) and follow its links" },
  CONSOLE_TLS_UNREADABLE: {
    layer: 'console',
    retryable: false,
    hint: 'check console.tls.cert and console.tls.key in the config and that this user may read them',
  },
  CONSOLE_UNSAFE_HOST: {
    layer: 'console',
    retryable: false,
    hint: 'set consolePassword in the secrets file (edge-agent console --hash-password makes the hash) before listening beyond loopback, or keep --host 127.0.0.1 and use an SSH tunnel',
  },
  CONFIG_BAD_ENUM: { layer: 'config', retryable: false, hint: 'use one of the values the message lists' },
  CONFIG_BAD_TIMEZONE: { layer: 'config', retryable: false, hint: 'set terminal.timeZone to an IANA name such as Europe/Berlin or UTC' },
  CONFIG_BAD_URL: { layer: 'config', retryable: false, hint: 'write a full URL such as http://10.0.0.5:8080 or mqtt://broker:1883' },
  CONFIG_INVALID: { layer: 'config', retryable: false, hint: 'write it as 04:00' },
  CONFIG_MISSING: {
    layer: 'config',
    retryable: false,
    hint: 'run "edge-agent provision" or add the missing setting to the config or the secrets file',
  },
  CONFIG_NONE: { layer: 'config', retryable: false, hint: 'pass --config FILE or set EDGE_AGENT_CONFIG, or run "edge-agent provision"' },
  CONFIG_NOT_FOUND: {
    layer: 'config',
    retryable: false,
    hint: 'check the path given to --config or $EDGE_AGENT_CONFIG, or run "edge-agent provision"',
  },
  CONFIG_SYNTAX: { layer: 'config', retryable: false, hint: 'fix the YAML or JSON at the position named' },
  CONFIG_TLS_UNREADABLE: {
    layer: 'config',
    retryable: false,
    hint: 'check the mqtt.tls paths in the config and that the agent user may read the files',
  },
  CONFIG_UNKNOWN_KEY: {
    layer: 'config',
    retryable: false,
    hint: 'remove the key or fix its spelling (the message suggests the nearest known key)',
  },
  CONFIG_WRONG_TYPE: { layer: 'config', retryable: false, hint: 'give the key a value of the type the message names' },
  CORE_ABORTED: { layer: 'core', retryable: false, hint: 'the operation was cancelled because the agent is stopping; nothing to do' },
  CORE_HTTP_BODY_ABORTED: {
    layer: 'core',
    retryable: true,
    hint: 'the client closed the connection before sending its whole body: send the request again',
  },
  CORE_HTTP_BODY_NOT_JSON: { layer: 'core', retryable: false, hint: 'send the body as one JSON value (Content-Type: application/json)' },
  CORE_HTTP_BODY_TIMEOUT: { layer: 'core', retryable: true, hint: 'send the whole body at once, then wait for the answer' },
  CORE_HTTP_BODY_TOO_LARGE: { layer: 'core', retryable: false, hint: 'send a smaller body: the message names the limit' },
  CORE_HTTP_BODY_TYPE: { layer: 'core', retryable: false, hint: 'send the body with the Content-Type the message names' },
  CORE_TIMEOUT: { layer: 'core', retryable: true, hint: 'the other side did not answer in time; check that it runs, then try again' },
  DRIVER_BAD_ARGUMENT: { layer: 'drivers', retryable: false, hint: 'use 9600, 19200, 38400, 57600 or 115200' },
  DRIVER_BAD_PARAM: {
    layer: 'drivers',
    retryable: false,
    hint: "a value out of the scanner's range was asked for: see the message for the accepted values",
  },
  DRIVER_BAD_TEMPLATE: {
    layer: 'drivers',
    retryable: false,
    hint: 'only templates made by a module of the same family can be stored on it',
  },
  DRIVER_BUSY: { layer: 'drivers', retryable: true, hint: 'Wait for it or stop it first.' },
  DRIVER_CHECKSUM: {
    layer: 'drivers',
    retryable: true,
    hint: 'noise on the line or a wrong baud rate: check the cable and the configured baud rate',
  },
  DRIVER_CLOSED: { layer: 'drivers', retryable: false, hint: 'the scanner was closed; the agent reopens it, or restart the command' },
  DRIVER_FINGER_NOT_LIFTED: { layer: 'drivers', retryable: true, hint: 'lift the finger between presses, then press again' },
  DRIVER_FRAME: {
    layer: 'drivers',
    retryable: false,
    hint: 'the device answered something that is not its protocol: check the scanner family and the baud rate',
  },
  DRIVER_LOW_QUALITY: { layer: 'drivers', retryable: true, hint: 'clean the sensor and the finger, press flat, and capture again' },
  DRIVER_NOT_OPEN: { layer: 'drivers', retryable: false, hint: 'Call open() first.' },
  DRIVER_NO_CARD: { layer: 'drivers', retryable: true, hint: 'hold the card over the reader' },
  DRIVER_NO_FINGER: { layer: 'drivers', retryable: true, hint: 'place the finger flat on the sensor when the light asks for it' },
  DRIVER_PROTOCOL: {
    layer: 'drivers',
    retryable: false,
    hint: 'the device on this port may not be an R30x module; run "edge-agent devices" to identify it',
  },
  DRIVER_SEQUENCE: { layer: 'drivers', retryable: true, hint: 'Reports were lost on the USB link; check the cable and the hub.' },
  DRIVER_SIM_UNKNOWN_FAULT: {
    layer: 'drivers',
    retryable: false,
    hint: "use one of the simulator's fault names (edge-agent simulate --help)",
  },
  DRIVER_TEMPLATE_FORMAT: { layer: 'drivers', retryable: false, hint: 'enrol the person on this kind of module, or use host matching' },
  DRIVER_TIMEOUT: {
    layer: 'drivers',
    retryable: true,
    hint: 'check that the scanner is powered and wired (TX/RX crossed) and that the baud rate matches',
  },
  DRIVER_UNKNOWN_FAMILY: {
    layer: 'drivers',
    retryable: false,
    hint: 'use r30x, gt521, iris-hid, badge-serial or badge-hid; "edge-agent devices" tells which scanner is attached',
  },
  DRIVER_UNSUPPORTED: {
    layer: 'drivers',
    retryable: false,
    hint: 'this scanner cannot do that: check its capabilities (edge-agent devices)',
  },
  ENROLL_API_ERROR: { layer: 'terminal', retryable: true, hint: 'check the service logs' },
  ENROLL_CANCELLED: {
    layer: 'terminal',
    retryable: true,
    hint: 'the enrolment was stopped before it finished and nothing was stored: run the command again',
  },
  ENROLL_DUPLICATE: {
    layer: 'terminal',
    retryable: false,
    hint: 'a person is enrolled once: check who is in front of the scanner, or delete the other enrolment first',
  },
  ENROLL_LOW_QUALITY: {
    layer: 'terminal',
    retryable: false,
    hint: 'clean the sensor and the finger and press flat, or look straight at the camera; or enrol another finger',
  },
  ENROLL_TIMEOUT: { layer: 'terminal', retryable: true, hint: 'present it when the scanner asks, then run the command again' },
  ENROLL_UNKNOWN_USER: {
    layer: 'terminal',
    retryable: false,
    hint: 'add the person in the attendance service first (operation 1), then enrol',
  },
  INGEST_MQTT_CONNECT: {
    layer: 'ingest',
    retryable: true,
    hint: 'check --mqtt, the MQTT credentials and that the broker runs and is reachable from here',
  },
  INGEST_METRICS_LISTEN: {
    layer: 'ingest',
    retryable: false,
    hint: 'another program uses the metrics port: choose another with --metrics-port (0 picks a free one)',
  },
  INGEST_NO_SHARED_SUBSCRIPTIONS: {
    layer: 'ingest',
    retryable: false,
    hint: 'use a broker with shared subscriptions (Mosquitto 2, EMQX, HiveMQ, VerneMQ), or run a single ingest with --no-share',
  },
  INTERNAL: { layer: 'core', retryable: false, hint: 'this is a bug in edge-agent: report it with the log lines around it' },
  MQTT_UNAVAILABLE: {
    layer: 'upload',
    retryable: true,
    hint: 'check mqtt.url and that the broker runs; punches wait in the outbox and go when it is back',
  },
  MQTT_PUBLISH_FAILED: {
    layer: 'upload',
    retryable: true,
    hint: 'the broker did not take the message: check the connection and the broker log (message_size_limit, ACLs)',
  },
  MQTT_PUBLISH_INVALID: {
    layer: 'upload',
    retryable: false,
    hint: 'nothing was sent: the topic or the payload is over what MQTT (or mqtt.maxPayloadBytes) allows',
  },
  OPS_BAD_ARGUMENT: { layer: 'ops', retryable: false, hint: 'omit "ids" to retry every dead letter' },
  OPS_BAD_REQUEST: { layer: 'ops', retryable: false, hint: 'send a JSON object such as {"transaction": "abc-1"}' },
  OPS_COMMAND_FAILED: { layer: 'ops', retryable: false, hint: 'the command failed on the terminal: read the message in the answer' },
  OPS_MQTT_CLOSED: { layer: 'ops', retryable: false, hint: 'check mqtt.url, the credentials and that the broker runs' },
  OPS_MQTT_CONNECT: { layer: 'ops', retryable: true, hint: 'check the broker URL, credentials and that the broker runs' },
  OPS_MQTT_TIMEOUT: { layer: 'ops', retryable: true, hint: 'check mqtt.url and that the broker runs and is reachable from this terminal' },
  OPS_NO_KEY: {
    layer: 'ops',
    retryable: false,
    hint: 'put opsKey (or opsKeys.<id>) in the secrets file (edge-agent provision --ops-key-file or --generate-ops-key), or pass --key-file',
  },
  OPS_SYNC_FAILED: {
    layer: 'site-sync',
    retryable: false,
    hint: "applying a site record failed: check the terminal's disk and logs; the record is applied again on the next sync",
  },
  OPS_SYNC_MALFORMED: {
    layer: 'ops',
    retryable: false,
    hint: 'a site record did not decrypt or parse: check that every terminal of the site has the same site key',
  },
  OPS_SYNC_NOT_STARTED: {
    layer: 'ops',
    retryable: false,
    hint: 'site sync is not running: it needs mqtt.url, a template key and a site key',
  },
  OPS_SYNC_NO_KEY: { layer: 'ops', retryable: false, hint: 'set siteKey in the secrets file (64 hex characters)' },
  OPS_SYNC_OFF: { layer: 'ops', retryable: false, hint: 'it needs mqtt.url, a template key and a site key' },
  OPS_SYNC_REFUSED: {
    layer: 'site-sync',
    retryable: false,
    hint: 'the record is not newer than what this terminal holds (a replay or a stale copy): nothing changed; publish a new enrolment or deletion to change it',
  },
  OPS_SYNC_TAMPERED: {
    layer: 'ops',
    retryable: false,
    hint: 'the message was altered or moved to another topic; re-enrol or republish from the origin terminal',
  },
  OPS_SYNC_WRONG_KEY: {
    layer: 'ops',
    retryable: false,
    hint: 'give every terminal of the site the same site key (edge-agent provision --site-key-file)',
  },
  OPS_UNAUTHENTICATED: {
    layer: 'ops',
    retryable: false,
    hint: 'sign the command with an ops key the terminal holds: edge-agent ops send (docs/operator.md, Authenticated commands)',
  },
  OPS_UNKNOWN_COMMAND: { layer: 'ops', retryable: false, hint: 'send one of the commands listed in the answer' },
  POLICY_BAD_PUNCH: { layer: 'terminal', retryable: false, hint: 'give the employee code and, for a fixed direction, in or out' },
  POLICY_BAD_TIME: { layer: 'terminal', retryable: false, hint: 'write the time as "2026-03-01 07:58:00"' },
  PROVISION_CHECK_FAILED: { layer: 'setup', retryable: false, hint: 'fix what the check names, then run provision again' },
  PROVISION_NOTHING_FOUND: {
    layer: 'setup',
    retryable: false,
    hint: 'check the cable and power (edge-agent devices lists what answers), or give --scanner family:path[:baud]',
  },
  PROVISION_TEMPLATE_KEY_MISMATCH: {
    layer: 'setup',
    retryable: false,
    hint: 'give the key the templates were stored with (--template-key-file, from the old secrets file or backup); to start over instead, delete the templates and sync them again from the site',
  },
  SECRETS_BAD_KEY: {
    layer: 'config',
    retryable: false,
    hint: 'write the key as 64 hex characters (openssl rand -hex 32), or let "edge-agent provision" generate it',
  },
  SECRETS_EMPTY: { layer: 'config', retryable: false, hint: 'write the secret into the file named' },
  SECRETS_PERMISSIONS: { layer: 'config', retryable: false, hint: 'make the secrets file readable by the agent user only: chmod 600 FILE' },
  SECRETS_SYNTAX: { layer: 'config', retryable: false, hint: 'fix the file or write it again with "edge-agent provision"' },
  SECRETS_UNKNOWN_KEY: { layer: 'config', retryable: false, hint: 'remove the key, or check its spelling against the known keys' },
  SECRETS_UNREADABLE: { layer: 'config', retryable: false, hint: 'check the path and that the agent user may read the file' },
  SERVER_ALREADY_LISTENING: { layer: 'server', retryable: false, hint: 'close the service before listening again' },
  SERVER_BAD_OPTION: { layer: 'server', retryable: false, hint: 'check the option named in the message' },
  SERVER_BAD_ROLE: { layer: 'server', retryable: false, hint: 'use admin or admin-audit' },
  SERVER_BIOMETRIC_KEY: {
    layer: 'server',
    retryable: false,
    hint: 'give a 32-byte key or delete the key file to have a new one made (stored biometrics then become unreadable)',
  },
  SERVER_DB_ERROR: {
    layer: 'server',
    retryable: false,
    hint: "the database failed the statement: the service log has the details; check the database server's log",
  },
  SERVER_DB_REFUSED: {
    layer: 'server',
    retryable: false,
    hint: 'the database refused the row (a constraint or a trigger): the service log names it',
  },
  SERVER_DB_UNAVAILABLE: {
    layer: 'server',
    retryable: true,
    hint: 'PostgreSQL cannot be reached, refuses the login or is shutting down: check that it runs, the URL, the password (PGPASSWORD or ~/.pgpass) and max_connections; requests answer 503 until it is back',
  },
  SERVER_DB_URL: { layer: 'server', retryable: false, hint: 'give --db a file path (SQLite) or a URL postgres://user@host:5432/database' },
  SERVER_LISTEN: {
    layer: 'server',
    retryable: false,
    hint: 'the port may be taken or not allowed: choose another with --port, or stop the program using it',
  },
  SERVER_SHIFTS_INVALID: {
    layer: 'server',
    retryable: false,
    hint: 'the shifts file holds {defaultShift, shifts: [{name, start: "HH:MM", end: "HH:MM"}]}; fix what is named',
  },
  SETUP_NO_PREVIOUS_RELEASE: {
    layer: 'setup',
    retryable: false,
    hint: 'only one release is installed; to go back, install the older release (dpkg -i edge-agent_<version>_<arch>.deb, or install-service from its tarball)',
  },
  SETUP_NOT_INSTALLED: {
    layer: 'setup',
    retryable: false,
    hint: 'rollback works on a terminal installed from the .deb or with "edge-agent install-service" run from a release tarball (see docs/raspberry-pi.md); give --prefix if it was installed under another root',
  },
  SETUP_RELEASE_DAMAGED: {
    layer: 'setup',
    retryable: false,
    hint: 'download and unpack the release again (check it with: sha256sum -c SHA256SUMS), then run install-service from it',
  },
  STORE_BAD_PUNCH: { layer: 'store', retryable: false, hint: 'check the punch named in the message; nothing was recorded' },
  STORE_BAD_TIME: { layer: 'store', retryable: false, hint: 'write the time as 2026-03-01 07:58:00' },
  STORE_DATABASE_CORRUPT: {
    layer: 'store',
    retryable: false,
    hint: 'the terminal\'s database is damaged: stop the agent (systemctl stop edge-agent), copy agent.db, agent.db-wal and agent.db-shm aside (pending punches are in them), run "edge-agent doctor" for the full check, then restore the database from backup',
  },
  STORE_NO_SINKS: { layer: 'store', retryable: false, hint: 'set upstream to api, mqtt or both' },
  STORE_OUTBOX_FULL: {
    layer: 'store',
    retryable: true,
    hint: 'restore the connection to the upstream ("edge-agent queue status" shows what waits), retry or purge dead letters ("edge-agent queue list --dead"), or raise outbox.maxPending if the disk has room',
  },
  STORE_SCHEMA_TOO_NEW: {
    layer: 'store',
    retryable: false,
    hint: 'a newer edge-agent migrated this database and migrations only go forward: run that version again ("edge-agent rollback" switches back to it), or move the data folder aside to start this version empty',
  },
  STORE_TEMPLATE_CORRUPT: {
    layer: 'store',
    retryable: false,
    hint: 'run "edge-agent doctor"; delete the template and enrol or sync it again',
  },
  STORE_TEMPLATE_INVALID: { layer: 'store', retryable: false, hint: 'check the template named in the message; nothing was stored' },
  STORE_TEMPLATE_KEY_INVALID: { layer: 'store', retryable: false, hint: 'write templateKey as 64 hex characters (openssl rand -hex 32)' },
  STORE_TEMPLATE_KEY_MISSING: {
    layer: 'store',
    retryable: false,
    hint: 'run "edge-agent provision" (it generates one), or put templateKey (64 hex characters, openssl rand -hex 32) in the 0600 secrets file or the systemd credential "template-key"',
  },
  STORE_TEMPLATE_KEY_WRONG: {
    layer: 'store',
    retryable: false,
    hint: 'restore the templateKey the templates were stored with (secrets file or systemd credential "template-key"); or, to start over, delete the templates and sync them again from the site',
  },
  TRANSPORT_BUSY: {
    layer: 'drivers',
    retryable: true,
    hint: 'another program holds the device (the running agent, another edge-agent command, a serial console): stop it or let it do the work',
  },
  TRANSPORT_CLOSED: { layer: 'drivers', retryable: false, hint: 'open the transport before using it' },
  TRANSPORT_DISCONNECTED: {
    layer: 'drivers',
    retryable: true,
    hint: 'check the cable and the module power; the agent reconnects by itself when the device is back',
  },
  TRANSPORT_IO: {
    layer: 'drivers',
    retryable: true,
    hint: 'the device is there but did not take the report: check it is the expected device and firmware',
  },
  TRANSPORT_NOT_FOUND: {
    layer: 'drivers',
    retryable: true,
    hint: 'check the cable and the path; run "edge-agent devices" to list what is attached',
  },
  TRANSPORT_OPEN_FAILED: {
    layer: 'drivers',
    retryable: false,
    hint: 'check that no other program holds the device (the agent itself, a serial console) and that it is attached',
  },
  TRANSPORT_PERMISSION: {
    layer: 'drivers',
    retryable: false,
    hint: 'give the agent user the device: add it to the dialout group (serial) or install the udev rules (edge-agent install-service)',
  },
  UPLOAD_DEAD_LETTER: {
    layer: 'upload',
    retryable: false,
    hint: 'look at it with "edge-agent queue list --dead", fix the cause in the service, then "edge-agent queue retry"',
  },
  UPLOAD_FAILED: {
    layer: 'upload',
    retryable: false,
    hint: 'delivery failed unexpectedly: punches stay in the outbox and are tried again',
  },
  UPLOAD_SINK_BROKEN: {
    layer: 'upload',
    retryable: true,
    hint: 'a delivery target failed in an unexpected way: read the message and the logs, then restart the agent',
  },
} as const satisfies Record<string, ErrorCodeInfo>;

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
