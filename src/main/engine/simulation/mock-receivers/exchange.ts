import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MockReceiver, MockRequestRecord, MockResponseRecord } from '../../../../shared/mock-receiver.schema';
import type { Decision } from './behavior';
import { SignatureVerifier } from './signature-check';
import { formatTimestamp } from '../../../../shared/timestamp';

export interface ExchangeContext {
  receiver: MockReceiver;
  decision: Decision;
  tls: boolean;
  bodyLimitBytes: number;
  now: () => number;
  /** Destroys the connection with a TCP reset (the host knows the raw socket under TLS). */
  reset: (req: IncomingMessage) => void;
  /** Called exactly once, when the exchange has ended in any way. */
  done: (record: MockRequestRecord, exchange: Exchange) => void;
}

type EndedBy = MockResponseRecord['endedBy'];

/**
 * One request to one receiver: buffers and signs the body, then carries out the decision and
 * records how it really ended (answered, reset, or the client/host closed first).
 */
export class Exchange {
  private readonly arrivedAt: number;
  private readonly verifier: SignatureVerifier;
  private readonly chunks: Buffer[] = [];
  private bodyBytes = 0;
  private storedBytes = 0;
  private bodyEndedAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Set just before we close the connection ourselves, so the close handler knows why. */
  private closing: EndedBy | null = null;
  private finished = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly ctx: ExchangeContext,
  ) {
    this.arrivedAt = ctx.now();
    this.verifier = new SignatureVerifier(ctx.receiver.secret);
    req.on('data', (chunk: Buffer) => this.onData(chunk));
    req.on('end', () => this.onBodyEnd());
    // 'close' on the response fires once the exchange is over, whoever ended it.
    res.on('close', () => this.finish(res.writableFinished ? 'response' : (this.closing ?? 'client')));
  }

  /** Ends the exchange because the host is stopping; the host then destroys the socket. */
  abort(): void {
    if (this.finished) return;
    this.closing = 'stop';
    this.finish('stop');
  }

  private onData(chunk: Buffer): void {
    this.verifier.update(chunk);
    this.bodyBytes += chunk.length;
    const room = this.ctx.bodyLimitBytes - this.storedBytes;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.chunks.push(part);
      this.storedBytes += part.length;
    }
  }

  private onBodyEnd(): void {
    this.bodyEndedAt = this.ctx.now();
    const { action, delayMs } = this.ctx.decision;
    if (action === 'hang') return; // hold the socket until the client or the host closes it
    const act = () => {
      this.timer = null;
      if (this.finished) return;
      if (action === 'reset') {
        this.closing = 'reset';
        this.ctx.reset(this.req);
      } else {
        this.answer();
      }
    };
    if (delayMs > 0) this.timer = setTimeout(act, delayMs);
    else act();
  }

  private answer(): void {
    const { status, headers, body } = this.ctx.decision;
    const text = body ?? '';
    this.res.writeHead(status ?? 200, { ...headers, 'content-length': String(Buffer.byteLength(text)) });
    this.res.end(text);
  }

  private finish(endedBy: EndedBy): void {
    if (this.finished) return;
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const end = this.ctx.now();
    const { receiver, decision } = this.ctx;
    const complete = this.bodyEndedAt !== null;
    let signature = this.verifier.result(headerValue(this.req, 'x-signature'));
    if (!complete && signature.state !== 'not_checked') {
      signature = { ...signature, state: 'invalid', reason: 'the client closed before sending the whole body' };
    }
    const record: MockRequestRecord = {
      id: randomUUID(),
      receiverId: receiver.id,
      receiverName: receiver.name,
      seq: decision.seq,
      at: formatTimestamp(this.arrivedAt),
      method: this.req.method ?? 'GET',
      path: this.req.url ?? '/',
      tls: this.ctx.tls,
      headers: flattenHeaders(this.req),
      body: Buffer.concat(this.chunks).toString('utf8'),
      bodyBytes: this.bodyBytes,
      bodyTruncated: this.bodyBytes > this.storedBytes,
      response: {
        action: decision.action,
        status: decision.status,
        delayMs: decision.delayMs,
        failed: decision.failed,
        headers: decision.headers,
        body: decision.body,
        endedBy,
        durationMs: Math.max(0, end - (this.bodyEndedAt ?? this.arrivedAt)),
      },
      signature,
    };
    this.ctx.done(record, this);
  }
}

function headerValue(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
