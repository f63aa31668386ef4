import { connect, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

/** What a raw client saw: the bytes answered, and how the connection ended. */
export interface RawExchange {
  /** Status code of the first response, or null when none arrived. */
  status: number | null;
  /** Everything the server sent, as text. */
  text: string;
  /** How the connection ended: the server closed it (FIN), reset it (RST), or the client gave up waiting. */
  ended: 'closed' | 'reset' | 'timeout' | 'aborted';
  /** Milliseconds from connecting to the end. */
  ms: number;
}

/**
 * Sends `head` (request line and headers, without the blank line) and `body` on a fresh TCP
 * connection, all at once and at full speed, without waiting for an answer, then reads until the
 * server ends the connection. A client that stops mid-body is `body` shorter than its Content-Length.
 * A write that fails because the server reset the connection counts as a reset. `noBlankLine` sends
 * `head` as it is (headers that never end); `signal` makes the client give up ('aborted'); `tls` speaks HTTPS.
 */
export function rawExchange(
  port: number,
  head: string,
  body: Buffer | string = '',
  o: { waitMs?: number; noBlankLine?: boolean; signal?: AbortSignal; tls?: boolean } = {},
): Promise<RawExchange> {
  const started = Date.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let reset = false;
    // Over TLS the server's certificate is not checked (the mock receivers' is self-signed).
    const socket: Socket = o.tls ? connectTls({ port, host: '127.0.0.1', rejectUnauthorized: false }) : connect(port, '127.0.0.1');
    const done = (ended: RawExchange['ended']) => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : null, text, ended: reset ? 'reset' : ended, ms: Date.now() - started });
    };
    const timer = setTimeout(() => done('timeout'), o.waitMs ?? 10_000);
    o.signal?.addEventListener('abort', () => done('aborted'));
    socket.on(o.tls ? 'secureConnect' : 'connect', () => {
      socket.write(o.noBlankLine ? head : `${head}\r\n\r\n`);
      if (body.length > 0) socket.write(body);
    });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') reset = true;
      done('reset');
    });
    // A server that half-closes (FIN) may still reset later if it stops reading: wait for 'close'.
    socket.on('close', () => done('closed'));
  });
}
