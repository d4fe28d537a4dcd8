/**
 * Fair shares of the service's connections: one client address (IPv4 /32, IPv6 /64:
 * client-address.ts) cannot take the connections or the request handling the others need.
 *
 * - **Connections per address** (`perAddress`, default 64, an eighth of the 512 in all): a
 *   connection past it is *held*: nothing it sends is kept, and after `refusalDelayMs` (1 s) it
 *   is answered `503` with `Retry-After: 1` and closed. Holding it makes a client that reconnects
 *   whenever it is closed do so once a second per socket instead of as fast as it can (every
 *   connection is an accept and a turn of the event loop the other clients wait behind). The
 *   more its address holds already, the longer one waits: one `refusalDelayMs` more for each
 *   `perAddress` held, up to `MAX_HOLD_STEPS` (10 s), so 600 reconnecting sockets from one
 *   address cycle ~70 times a second instead of ~540, while a client a few over its share waits
 *   1 s. At most `maxHeld` are held at once (1024, fewer when the limit of open files leaves less
 *   room: `maxHeldFor`); past that a refused connection is closed at once.
 * - **Connections in all** (`maxConnections`, 512): a connection past it is closed at once, as
 *   node's own cap did (`drop`). Held connections do not count here; node's cap is set to the
 *   sum, the bound on the sockets (and file descriptors) the service keeps.
 * - **Requests in flight per address** (`requestsPerAddress`, default 32): a request arriving
 *   while that many of its address are being handled is answered `503` with `Retry-After: 1`
 *   after `refusalDelayMs` (http.ts; it is not counted in flight meanwhile), so one address
 *   cannot hold all of the database's attention, nor send refused requests as fast as the
 *   answers come back.
 *
 * `attach` puts the guard in front of node's HTTP connection handling: a held or dropped socket
 * never reaches the HTTP parser.
 */
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { clientBucketOf } from '../core/client-address.js';

export interface ConnectionLimits {
  /** Connections at once in all; more are closed as they come. */
  maxConnections: number;
  /** Connections at once from one address (IPv6: one /64); more are held, then answered 503. */
  perAddress: number;
  /** Requests being handled at once for one address; more are answered 503 at once. */
  requestsPerAddress: number;
  /** How long a connection over its address's share is held before its 503 (ms). */
  refusalDelayMs: number;
  /** Connections held at once at most; past that a refused one is closed at once. */
  maxHeld: number;
}

/** A connection refused: held (then 503) or closed at once, and from where. */
export type RefusedConnection = { kind: 'held' | 'dropped'; address: string };

export const DEFAULT_CONNECTION_SHARES = {
  perAddress: 64,
  requestsPerAddress: 32,
  refusalDelayMs: 1000,
  /** Held connections at most, if the limit of open files leaves room for them (`maxHeldFor`). */
  maxHeld: 1024,
} as const;

/** Files the service keeps open besides its connections (database, WAL, logs, libraries), with room to spare. */
const FILES_BESIDES_CONNECTIONS = 128;

/** The process's limit of open files (the soft one), from /proc/self/limits; null where it cannot be read. */
export function openFilesLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * How many refused connections can be held: up to `DEFAULT_CONNECTION_SHARES.maxHeld`, within
 * what the limit of open files leaves beside `maxConnections` and the service's own files (with
 * systemd's default of 1024 and 512 connections: 384). Past the limit of open files accepting
 * fails for every client, so a refused connection is better closed at once than held.
 */
export function maxHeldFor(maxConnections: number, filesLimit = openFilesLimit()): number {
  const room = filesLimit === null ? DEFAULT_CONNECTION_SHARES.maxHeld : filesLimit - maxConnections - FILES_BESIDES_CONNECTIONS;
  return Math.max(0, Math.min(DEFAULT_CONNECTION_SHARES.maxHeld, room));
}

/** A held connection waits at most this many `refusalDelayMs` for its 503. */
export const MAX_HOLD_STEPS = 10;

/** How long a held connection may take to close after its 503 before it is destroyed. */
const LINGER_MS = 2000;

const REFUSAL_BODY = (limit: number) =>
  JSON.stringify({
    statusCode: 'ERROR',
    statusDescription: `too many connections from this address (at most ${limit} at once): close idle ones, retry after 1 s`,
    returnValue: null,
  });

interface AddressState {
  connections: number;
  requests: number;
  /** Connections of this address held for their 503. */
  held: number;
}

export class ConnectionGuard {
  readonly limits: ConnectionLimits;
  readonly #addresses = new Map<string, AddressState>();
  readonly #refusal: string;
  readonly #held = new Set<Socket>();
  #open = 0;
  /** Refused so far: connections held (then 503), connections closed at once, requests answered 503. */
  readonly refused = { held: 0, dropped: 0, requests: 0 };

  readonly #onRefused: (r: RefusedConnection) => void;

  constructor(limits: ConnectionLimits, onRefused: (r: RefusedConnection) => void = () => undefined) {
    this.#onRefused = onRefused;
    this.limits = { ...limits, perAddress: Math.min(limits.perAddress, limits.maxConnections) };
    const body = REFUSAL_BODY(this.limits.perAddress);
    this.#refusal = `HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  }

  /** Connections admitted and open now, held ones, and the addresses with one of either or a request in flight. */
  get connections(): { open: number; held: number; addresses: number } {
    return { open: this.#open, held: this.#held.size, addresses: this.#addresses.size };
  }

  /** Closes the connections held (the service is closing: they would only wait for their 503). */
  closeHeld(): void {
    for (const socket of this.#held) socket.destroy();
  }

  /**
   * Puts the guard before `server`'s HTTP handling of new connections, and sets node's own cap
   * to the sum of the admitted and the held (what is past it node closes at once: `drop`).
   */
  attach(server: Server): void {
    const http = server.listeners('connection') as Array<(socket: Socket) => void>;
    server.removeAllListeners('connection');
    server.on('connection', (socket: Socket) => {
      if (this.admit(socket)) for (const listener of http) listener.call(server, socket);
    });
    server.maxConnections = this.limits.maxConnections + this.limits.maxHeld;
  }

  /** Decides on a new connection: true when it may be served (it is counted until it closes). */
  admit(socket: Socket): boolean {
    const key = clientBucketOf(socket.remoteAddress);
    if (this.#open >= this.limits.maxConnections) {
      this.#drop(socket, key);
      return false;
    }
    const state = this.#state(key);
    if (state.connections >= this.limits.perAddress) {
      this.#hold(socket, key, state);
      return false;
    }
    state.connections++;
    this.#open++;
    socket.once('close', () => {
      state.connections--;
      this.#open--;
      this.#release(key, state);
    });
    return true;
  }

  /** A request of `address` begins: a function to call when it is answered, or null when its address has its share in flight. */
  beginRequest(address: string | undefined): (() => void) | null {
    const key = clientBucketOf(address);
    const state = this.#state(key);
    if (state.requests >= this.limits.requestsPerAddress) {
      this.refused.requests++;
      return null;
    }
    state.requests++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      state.requests--;
      this.#release(key, state);
    };
  }

  #state(key: string): AddressState {
    let state = this.#addresses.get(key);
    if (!state) {
      state = { connections: 0, requests: 0, held: 0 };
      this.#addresses.set(key, state);
    }
    return state;
  }

  /** Forgets an address with nothing open (the map holds only addresses with connections, held ones or requests). */
  #release(key: string, state: AddressState): void {
    if (state.connections === 0 && state.requests === 0 && state.held === 0 && this.#addresses.get(key) === state)
      this.#addresses.delete(key);
  }

  #drop(socket: Socket, address: string): void {
    this.refused.dropped++;
    this.#onRefused({ kind: 'dropped', address });
    socket.destroy();
  }

  /** Holds a refused connection, then answers it 503 and closes it; closes it at once when too many are held. */
  #hold(socket: Socket, address: string, state: AddressState): void {
    if (this.#held.size >= this.limits.maxHeld) {
      this.#drop(socket, address);
      return;
    }
    const steps = Math.min(MAX_HOLD_STEPS, 1 + Math.floor(state.held / this.limits.perAddress));
    state.held++;
    socket.on('error', () => undefined); // a client resetting its refused connection is nothing to report
    this.refused.held++;
    this.#onRefused({ kind: 'held', address });
    this.#held.add(socket);
    socket.resume(); // what it sends is dropped, never parsed or kept
    let linger: NodeJS.Timeout | undefined;
    const answer = setTimeout(() => {
      socket.end(this.#refusal);
      linger = setTimeout(() => socket.destroy(), LINGER_MS);
    }, steps * this.limits.refusalDelayMs);
    socket.once('close', () => {
      clearTimeout(answer);
      clearTimeout(linger);
      this.#held.delete(socket);
      state.held--;
      this.#release(address, state);
    });
  }
}
