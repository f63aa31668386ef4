import { subscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { buildConnector } from 'undici';

// Connect and TLS times of the connection an attempt went out on. undici does not report them, so
// its connector is wrapped to note each new socket's times, and the socket a request is written on
// is learned from undici's diagnostics channel.

/** When a connection was opened (performance.now()), connected, and finished its TLS handshake; how many requests it carried. */
export interface SocketTiming {
  start: number;
  tcp: number | null;
  tls: number | null;
  uses: number;
}

/** What wants to hear which socket its request was written on. */
export interface SocketListener {
  onSocket(t: SocketTiming | undefined): void;
}

const socketTimings = new WeakMap<object, SocketTiming>();
/** A connection that failed (refused, TLS handshake) never writes a request; its error names it. */
const failedTimings = new WeakMap<object, SocketTiming & { failed: number }>();

/** The times of the connection an error ended, when the error is a connect or handshake failure. */
export function connectFailureTiming(err: unknown): (SocketTiming & { failed: number }) | undefined {
  return typeof err === 'object' && err !== null ? failedTimings.get(err) : undefined;
}

/** undici's own connector, with each new socket's connect and handshake times noted. */
export function timedConnector(base: buildConnector.connector): buildConnector.connector {
  // Typed as returning nothing, undici's connector returns the socket it opens (lib/core/connect.js).
  const open = base as unknown as (o: buildConnector.Options, cb: buildConnector.Callback) => Socket | undefined;
  return (opts, callback) => {
    const t: SocketTiming = { start: performance.now(), tcp: null, tls: null, uses: 0 };
    // undici hands the connector's error object itself to every request waiting on the connection.
    const socket = open(opts, (err, sock) => {
      // Only a connection made and then lost has times to show (a refused one shows its total only).
      if (err && t.tcp !== null) failedTimings.set(err, { ...t, failed: performance.now() });
      (callback as (e: Error | null, s: unknown) => void)(err, sock);
    });
    if (!socket) return socket;
    socketTimings.set(socket, t);
    socket.once('connect', () => (t.tcp = performance.now()));
    if (opts.protocol === 'https:') socket.once('secureConnect', () => (t.tls = performance.now()));
    return socket;
  };
}

// The attempt whose request undici is about to write: set in onRequestStart, taken by the next
// sendHeaders message, which undici publishes in the same synchronous step (client-h1 writeH1). The
// channel is process-wide (Node's own fetch publishes there too), so nothing else is ever paired.
let assigning: SocketListener | null = null;

/** Call from onRequestStart: undici writes that request's headers next, in the same synchronous step. */
export function nextOnSocket(a: SocketListener): void {
  assigning = a;
}

subscribe('undici:client:sendHeaders', (message) => {
  const a = assigning;
  assigning = null;
  if (a) a.onSocket(socketTimings.get((message as { socket: object }).socket));
});
