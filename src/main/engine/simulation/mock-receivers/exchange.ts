import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MAX_ITEMS_BODY_BYTES, type MockReceiver, type MockRequestRecord, type MockResponseRecord } from '../../../../shared/mock-receiver.schema';
import type { Decision, ItemsAnswer } from './behavior';
import { SignatureVerifier, StandardWebhooksVerifier } from './signature-check';
import type { Refusal } from './screening';
import type { SignatureCheck, StandardWebhooksCheck } from '../../../../shared/mock-receiver.schema';
import { formatTimestamp } from '../../../../shared/timestamp';

export interface ExchangeContext {
  receiver: MockReceiver;
  decision: Decision;
  tls: boolean;
  bodyLimitBytes: number;
  now: () => number;
  /** A per-item answer to the whole body (null: not read whole); called once, when the body is in. */
  answerItems: (body: Buffer | null) => ItemsAnswer;
  /**
   * What the receiver checks before answering (enforceSignature, knownTypes, rejectDuplicates:
   * screening.ts), when its behaviour has any: the whole body (null past MAX_ITEMS_BODY_BYTES) and
   * why the signature check failed (null: valid or not checked). A refusal replaces the answer.
   */
  screen?: (body: Buffer | null, signatureProblem: string | null) => Refusal | null;
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
  private readonly swVerifier: StandardWebhooksVerifier;
  /** The decision as carried out: a per-item answer fills in status and body when the body is in. */
  private decision: Decision;
  private itemStatuses: number[] | undefined;
  /** A per-item answer's copy of the whole body (the stored copy may be truncated); null once past MAX_ITEMS_BODY_BYTES. */
  private whole: Buffer[] | null;
  private readonly chunks: Buffer[] = [];
  private bodyBytes = 0;
  private storedBytes = 0;
  private bodyEndedAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Set just before we close the connection ourselves, so the close handler knows why. */
  private closing: EndedBy | null = null;
  private finished = false;
  /** Whether the body is screened before the answer (an answer as decided, not a failure of failFirst/failPercent). */
  private readonly screening: boolean;
  /** The signature checks, when made at the end of the body for screening (a digest is taken once). */
  private checked: { signature: SignatureCheck; standardWebhooks: StandardWebhooksCheck } | null = null;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly ctx: ExchangeContext,
  ) {
    this.arrivedAt = ctx.now();
    this.decision = ctx.decision;
    this.screening = ctx.screen !== undefined && ctx.decision.action === 'status' && !ctx.decision.failed;
    this.whole = ctx.decision.perItem || this.screening ? [] : null;
    this.verifier = new SignatureVerifier(ctx.receiver.secret);
    this.swVerifier = new StandardWebhooksVerifier(ctx.receiver.standardWebhooksSecret, req.headers as Record<string, string | undefined>, Math.floor(this.arrivedAt / 1000));
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
    this.swVerifier.update(chunk);
    this.bodyBytes += chunk.length;
    if (this.whole !== null) {
      if (this.bodyBytes > MAX_ITEMS_BODY_BYTES) this.whole = null;
      else this.whole.push(chunk);
    }
    const room = this.ctx.bodyLimitBytes - this.storedBytes;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.chunks.push(part);
      this.storedBytes += part.length;
    }
  }

  private onBodyEnd(): void {
    this.bodyEndedAt = this.ctx.now();
    const whole = this.whole === null ? null : Buffer.concat(this.whole, this.bodyBytes);
    this.whole = null;
    const refusal = this.screening ? this.screen(whole) : null;
    if (refusal) {
      const body = JSON.stringify({ ok: false, error: refusal.error });
      this.decision = { ...this.decision, status: refusal.status, body, headers: { ...this.decision.headers, 'content-type': 'application/json' }, perItem: false };
    } else if (this.decision.perItem) {
      const answer = this.ctx.answerItems(this.bodyBytes > MAX_ITEMS_BODY_BYTES ? null : whole);
      this.decision = { ...this.decision, status: answer.status, body: answer.body };
      this.itemStatuses = answer.itemStatuses;
    }
    const { action, delayMs } = this.decision;
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

  private screen(body: Buffer | null): Refusal | null {
    const signature = this.verifier.result(headerValue(this.req, 'x-signature'));
    const standardWebhooks = this.swVerifier.result();
    this.checked = { signature, standardWebhooks };
    const failed = (c: { state: string; reason: string | null }) => (c.state === 'invalid' || c.state === 'missing' ? (c.reason ?? c.state) : null);
    return this.ctx.screen!(this.bodyBytes > MAX_ITEMS_BODY_BYTES ? null : body, failed(signature) ?? failed(standardWebhooks));
  }

  private answer(): void {
    const { status, headers, body } = this.decision;
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
    const { receiver } = this.ctx;
    const decision = this.decision;
    const complete = this.bodyEndedAt !== null;
    const cutShort = 'the client closed before sending the whole body';
    let signature = this.checked?.signature ?? this.verifier.result(headerValue(this.req, 'x-signature'));
    if (!complete && signature.state !== 'not_checked') {
      signature = { ...signature, state: 'invalid', reason: cutShort };
    }
    let standardWebhooks = this.checked?.standardWebhooks ?? this.swVerifier.result();
    if (!complete && standardWebhooks.state !== 'not_checked') standardWebhooks = { ...standardWebhooks, state: 'invalid', reason: cutShort };
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
        ...(this.itemStatuses ? { itemStatuses: this.itemStatuses } : {}),
        endedBy,
        durationMs: Math.max(0, end - (this.bodyEndedAt ?? this.arrivedAt)),
      },
      signature,
      standardWebhooks,
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
