import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { guardServer, type HttpTimeouts } from '../../src/main/engine/http-timeouts';

// Issue 44: under load the control API reset a kept-alive connection (ECONNRESET in
// config-fuzz.test.ts). The event loop was held past the connection's keep-alive timeout while the
// client's next request was already on its way: timers run before the loop reads its sockets, so
// Node destroyed the connection with that request unread. Here client and server share this
// process's loop, which is held until both the timeout and the client's next write are due in the
// same turn of timers: the server's timer first (it is due first), then the client's write.

const T: HttpTimeouts = { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 1_000, checkIntervalMs: 1_000 };
// Node 20 closes an idle connection 1 s after the keep-alive timeout it announces.
const SERVER_CLOSES_AFTER_MS = T.keepAliveMs + 1_000;

let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  guardServer(server, T, (message) => ({ error: message }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const REQUEST = `GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;

/** Reads answers off the socket: resolves with the text once `n` HTTP status lines came, or with what came when it closed. */
function answers(socket: Socket, n: number): Promise<{ text: string; error: string | null }> {
  let text = '';
  let error: string | null = null;
  return new Promise((resolve) => {
    const done = () => resolve({ text, error });
    socket.on('data', (d) => {
      text += d.toString();
      if ((text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length >= n) done();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
    socket.on('close', done);
  });
}

it('a request written as the keep-alive timer falls due, while the loop was held, is answered, not reset', async () => {
  const socket = connect(port, '127.0.0.1');
  try {
    const read = answers(socket, 2);
    socket.write(REQUEST);
    // The first answer is in: from here the connection is idle and its keep-alive timer runs.
    const firstIn = await new Promise<number>((resolve) => {
      const check = () => (socket.bytesRead > 0 ? resolve(performance.now()) : setImmediate(check));
      check();
    });
    // Due after the server's timer, so it runs after it in the same turn of timers.
    const wrote = new Promise<void>((resolve) =>
      setTimeout(() => {
        socket.write(REQUEST);
        resolve();
      }, SERVER_CLOSES_AFTER_MS + 200),
    );
    // Held from the loop's check phase, as a long task is, until both timers are due.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (performance.now() - firstIn < SERVER_CLOSES_AFTER_MS + 600) {
      // holding the loop
    }
    await wrote;
    const { text, error } = await read;
    expect(error).toBeNull();
    expect(text.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
  } finally {
    socket.destroy();
  }
});
