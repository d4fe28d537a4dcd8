/**
 * The daemon's codes (`AGENT_…`): lifecycle, the control socket, scanners, the extractor and template cache it wires.
 *
 * Tested in test/unit/core/error-codes.test.ts (this layer's codes joined into the one table, each
 * code in one layer only) and test/unit/core/errors.test.ts (every code has a layer and a hint).
 */
import { layerCodes } from './layer-codes.js';

export const DAEMON_CODES = layerCodes('daemon', {
  AGENT_ALREADY_RUNNING: {
    retryable: false,
    hint: 'stop it first (systemctl stop edge-agent) or use another --data folder',
  },
  AGENT_BROKER_LISTEN: { retryable: false, hint: 'choose another port or stop what uses it' },
  AGENT_CAPTURE: {
    retryable: false,
    hint: 'a capture failed unexpectedly: the scanner worker goes on with the next one; check the scanner if it repeats',
  },
  AGENT_CONTROL_BAD_REQUEST: {
    retryable: false,
    hint: 'send a JSON object with an action the daemon knows (edge-agent enroll or identify do this for you)',
  },
  AGENT_CONTROL_FAILED: {
    retryable: false,
    hint: 'the daemon could not do it: read the message, then check "journalctl -u edge-agent"',
  },
  AGENT_CONTROL_UNKNOWN: {
    retryable: false,
    hint: 'update edge-agent so the CLI and the running daemon are the same version',
  },
  AGENT_CONTROL_UNREACHABLE: { retryable: false, hint: 'is edge-agent run running on this data folder?' },
  AGENT_FILES_MISSING: { retryable: false, hint: 'reinstall edge-agent; the package ships systemd/edge-agent.service' },
  AGENT_NO_EXTRACTOR: {
    retryable: false,
    hint: 'run "edge-agent doctor": the extraction models failed to load or the template key is missing',
  },
  AGENT_NO_SCANNER: {
    retryable: false,
    hint: 'configure a scanner with --scanner family:path or in the config, then run "edge-agent doctor"',
  },
  AGENT_NO_TEMPLATE_CACHE: { retryable: false, hint: 'set a template key (edge-agent provision) and restart' },
  AGENT_NO_TEMPLATE_KEY: {
    retryable: false,
    hint: 'run "edge-agent provision" (it generates one) or put templateKey (64 hex characters) in the secrets file',
  },
  AGENT_PUNCH: {
    retryable: false,
    hint: 'recording a punch failed: run "edge-agent doctor" (disk, database) and check the logs',
  },
  AGENT_SCANNER_BUSY: {
    retryable: true,
    hint: 'another process holds the scanner: enroll and identify through the running agent (edge-agent enroll with its configuration goes through its control socket), or stop it first (systemctl stop edge-agent)',
  },
  AGENT_SCANNER_DISCONNECTED: {
    retryable: false,
    hint: 'check the scanner cable and power; the agent reopens it by itself when it is back',
  },
  AGENT_SCANNER_OPEN: {
    retryable: false,
    hint: 'the scanner could not be opened: check the cable, the path and the baud rate; the agent keeps trying',
  },
  AGENT_SCANNER_UNAVAILABLE: {
    retryable: true,
    hint: 'check the cable and "edge-agent devices"; the agent reconnects by itself',
  },
  AGENT_WRITE_FAILED: {
    retryable: false,
    hint: 'check that the folder exists, that the agent user may write there, and that the disk is not full',
  },
});
