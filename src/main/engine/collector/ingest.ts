import type { CallType, NormalizedCall, Source } from '../../../shared/types';
import { validateMessage } from '../../../shared/message-rules';
import { readCallHead, requestItems, type CallHead, type Envelope } from '../../../shared/normalize';
import { findWriteKey } from './write-key';
import { batchItemSizes, mayHoldOversizeItem } from './batch-item-sizes';
import { ByteGate } from './byte-gate';
import { INGEST_BYTES_IN_FLIGHT, MAX_BATCH_ITEMS, MAX_CALL_BYTES } from '../../../shared/limits';
import type { Store } from '../store/store';
import { recordArrivals, type ArrivingCall, type DeliveryPlanner, type StoredResult } from '../store/arrivals';
import type { RequestInfo } from '../store/requests.repo';
import type { FaultDecision, FaultInjector } from './fault-injector';
import { DelayedRequests } from './delayed-requests';
import { ACCEPTED_ENCODINGS, compressedHint, decodeBody } from './content-encoding';
import { MAX_DELAYED_BYTES } from '../../../shared/collector-faults';
import type { TrackingPlans } from '../tracking-plans/service';

export interface IngestRequest {
  path: string;
  /** The call type a single-call route implies, or 'batch'. */
  route: CallType | 'batch';
  authorization?: string;
  contentType?: string;
  /** `gzip` or `deflate`: the body is decoded before it is read (content-encoding.ts). */
  contentEncoding?: string;
  userAgent?: string;
  body: Buffer | undefined;
  /** The app's own test call: the source's collector faults do not apply to it (README, Decisions, "Collector faults"). */
  bypassFaults?: boolean;
}

export interface IngestResponse {
  status: number;
  body: { success: boolean; message?: string };
  /** What was committed (absent when the request was refused). */
  stored?: StoredResult;
  /** Set when fault injection refused the request: the HTTP layer answers status, hangs or resets as it says. */
  fault?: FaultDecision;
  /** Seconds for a Retry-After header (503 while storage fails, or with delayed requests over their limit). */
  retryAfter?: number;
  /** An Accept-Encoding header: with the 415 for a Content-Encoding not taken (RFC 7694). */
  acceptEncoding?: string;
}

const OK: IngestResponse = { status: 200, body: { success: true } };
const bad = (message: string, status = 400): IngestResponse => ({ status, body: { success: false, message } });

/**
 * The collector's logic, independent of the HTTP framework: parse, authenticate, read each call's
 * head, then hand the request over to the store's call ledger (store/arrivals.ts), which
 * de-duplicates, stores every call (accepted or dropped with its reason) and creates the deliveries
 * the planner asks for, in one write job. The promise settles after COMMIT: only then is 2xx answered.
 */
export class Ingest {
  private readonly gate = new ByteGate(INGEST_BYTES_IN_FLIGHT);
  private readonly delayed = new DelayedRequests(MAX_DELAYED_BYTES);

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    /** How accepted calls are forwarded: the dispatcher's rule (delivery-plan.ts), wired in engine.ts. */
    private readonly planner: DeliveryPlanner,
    private readonly onStored: (r: StoredResult) => void,
    /** Collector faults (README, Decisions): consulted only for a source that has them set. */
    private readonly faults?: FaultInjector,
    /** Tracking plans (issue 24): consulted once per request; a source without a plan costs one Map lookup. */
    private readonly plans?: TrackingPlans,
  ) {}

  async handle(req: IngestRequest): Promise<IngestResponse> {
    // Known to fail: refuse at once, so clients retry later and nothing is half taken.
    if (!this.store.health.ok) return storageUnavailable(this.store.health.get().message);
    const receivedAt = this.now();
    // From here on the body is the one the client compressed; the gate counts the bytes parsed.
    let request = req;
    if (req.contentEncoding !== undefined) {
      const decoded = decodeBody(req.body, req.contentEncoding, req.route === 'batch');
      if (!decoded.ok) return decoded.status === 415 ? { ...bad(decoded.message, 415), acceptEncoding: ACCEPTED_ENCODINGS } : bad(decoded.message, decoded.status);
      request = { ...req, body: decoded.body, contentEncoding: decoded.encoding ?? undefined };
    }
    const bytes = request.body?.length ?? 0;
    const wait = this.gate.acquire(bytes);
    if (wait) await wait;
    try {
      return await this.process(request, receivedAt, bytes);
    } finally {
      this.gate.release(bytes);
    }
  }

  private async process(req: IngestRequest, receivedAt: number, bytes: number, faultDrawn = false): Promise<IngestResponse> {
    const text = req.body?.toString('utf8') ?? '';
    if (text.trim() === '') return bad('request body is empty: send a JSON object');
    // JSON.parse would name an invisible character; README, Decisions: "A byte order mark is refused".
    if (text.charCodeAt(0) === 0xfeff) return bad('request body starts with a byte order mark (U+FEFF), which JSON sent over a network must not carry (RFC 8259, section 8.1): send it without');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return bad(`invalid JSON: ${(err as Error).message}${req.contentEncoding ? '' : compressedHint(req.body)}`);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return bad('request body must be a JSON object');
    const envelopeBody = body as Record<string, unknown>;
    const found = findWriteKey(req.authorization, envelopeBody);
    if (!found) return bad('missing write key: send HTTP Basic auth with the write key as user name, or "writeKey" in the body');
    // The key is known only once the body is parsed (it may be in it): faults are drawn here, one draw
    // per request with a parsed body and a source's key, whichever way the key came (none for the
    // app's test call, and none again for a request coming back from its delay).
    const source = this.store.sources.byWriteKey(found.key);
    if (source?.collectorFaults && this.faults && !faultDrawn && !req.bypassFaults) {
      const fault = this.faults.draw(source);
      if (fault?.mode === 'delay') return this.afterDelay(req, receivedAt, bytes, fault.delayMs ?? 0);
      if (fault) return refusedByFault(fault);
    }

    if (req.route === 'batch') {
      if (!Array.isArray(envelopeBody.batch)) return bad('"batch" must be an array of calls');
      if (envelopeBody.batch.length > MAX_BATCH_ITEMS) {
        return bad(`"batch" has ${envelopeBody.batch.length} items; at most ${MAX_BATCH_ITEMS} are allowed`);
      }
    } else {
      const bytes = Buffer.byteLength(text);
      if (bytes > MAX_CALL_BYTES) return bad(`call is ${bytes} bytes; at most ${MAX_CALL_BYTES} (32 KB) are allowed`);
    }
    const { items, envelope } = requestItems(envelopeBody, req.route);

    const strict = this.store.settings.get().strict;
    if (!source && strict) return bad(`unknown write key "${found.key}"`, 401);

    const sizes = req.route === 'batch' && req.body && mayHoldOversizeItem(req.body.length, items, MAX_CALL_BYTES) ? batchItemSizes(req.body) : null;
    const prepared = items.map((item, i) => this.prepare(item, req.route === 'batch' ? i : null, sizes?.[i] ?? 0, envelope, receivedAt));
    const info: RequestInfo = {
      path: req.path,
      contentType: req.contentType ?? null,
      userAgent: req.userAgent ?? null,
      writeKeyFrom: found.from,
      batchSize: req.route === 'batch' ? items.length : null,
      ...(req.contentEncoding ? { contentEncoding: req.contentEncoding } : {}),
    };
    if (strict) {
      const invalid = prepared.findIndex((p) => p.dropReason !== null);
      if (invalid !== -1) return bad(strictMessage(req.route, invalid, prepared[invalid]));
    }
    // Checked on the event loop only when known cheap, else in the check workers with a budget: the
    // request's answer waits for its verdicts, the loop does not (issue 38). Nothing is compiled here.
    const plan = source && this.plans?.planFor(source.id);
    if (plan) await this.plans!.checkArriving(plan, prepared, envelope, { body: req.body ?? Buffer.alloc(0), route: req.route });
    const recordVerdict = plan ? this.plans!.recorder : undefined;
    const recordChecked = plan ? this.plans!.checkedRecorder : undefined;
    let stored: StoredResult;
    try {
      stored = await recordArrivals(this.store, [{ receivedAt, info, body: text, source, calls: prepared, deduplicate: true, recordVerdict, recordChecked }], this.planner);
    } catch (err) {
      // Nothing of this request was committed: 503, and the client sends it again (SPEC §3: a 2xx only once durable).
      if (this.store.health.noteError(err)) return storageUnavailable(this.store.health.get().message);
      throw err;
    }
    // After COMMIT: the dispatcher may start, and the 2xx may go out.
    this.onStored(stored);
    return { ...OK, stored };
  }

  /**
   * A delayed request waits outside the byte gate (its wait must not hold up other requests), keeping
   * only its raw body: it is parsed again when the wait ends. The bodies waiting are bounded
   * (MAX_DELAYED_BYTES); one that does not fit is answered 503 at once.
   */
  private async afterDelay(req: IngestRequest, receivedAt: number, bytes: number, ms: number): Promise<IngestResponse> {
    const waiting = this.delayed.wait(bytes, ms);
    if (!(waiting instanceof Promise)) return delayedOverLimit(waiting.retryAfterS);
    this.gate.release(bytes);
    await waiting;
    const wait = this.gate.acquire(bytes);
    if (wait) await wait;
    return this.process(req, receivedAt, bytes, true);
  }

  /** The collector is closing: delayed requests are handled now rather than at the end of their delay. */
  endDelays(): void {
    this.delayed.endAll();
  }

  private prepare(item: unknown, batchIndex: number | null, bytes: number, envelope: Envelope, receivedAt: number): ArrivingCall {
    const obj = typeof item === 'object' && item !== null && !Array.isArray(item) ? (item as Record<string, unknown>) : null;
    const type = typeof obj?.type === 'string' ? obj.type : 'unknown';
    if (bytes > MAX_CALL_BYTES) {
      return { batchIndex, type, item: obj, remembered: false, head: null, normalized: null, envelope, dropReason: `call is over 32 KB (${bytes} bytes)` };
    }
    const r = readCallHead(item, { envelope, receivedAt });
    return r.ok
      ? { batchIndex, type, item: obj, remembered: false, head: r.head, normalized: null, envelope, dropReason: null }
      : { batchIndex, type, item: obj, remembered: false, head: null, normalized: null, envelope, dropReason: r.reason };
  }

  /**
   * Calls the app makes itself (deletion notices, audience syncs, test calls): stored and forwarded
   * exactly like received ones, so the inspector shows them and the dispatcher treats them the same.
   */
  /** `planner` replaces the dispatcher's rule: the probe stores its calls with no delivery planned (it sends them itself). */
  async inject(items: InternalCall[], planner: DeliveryPlanner = this.planner): Promise<StoredResult> {
    const receivedAt = this.now();
    const arrivals = items.map(({ call: c, path, userAgent, source }) => {
      const head: CallHead = { type: c.type, messageId: c.messageId, timestampMs: Date.parse(c.timestamp), userId: c.userId ?? undefined, anonymousId: c.anonymousId ?? undefined, event: c.event, name: c.name };
      const call: ArrivingCall = { batchIndex: null, type: c.type, head, normalized: c, envelope: {}, item: null, dropReason: null };
      return { receivedAt, info: { path, contentType: null, userAgent, writeKeyFrom: 'none' as const, batchSize: null }, body: JSON.stringify(c), source, calls: [call], deduplicate: false };
    });
    const stored = await recordArrivals(this.store, arrivals, planner);
    this.onStored(stored);
    return stored;
  }
}

export interface InternalCall {
  source: Source;
  call: NormalizedCall;
  /** Shown as the call's route in the inspector, e.g. /internal/deletion. */
  path: string;
  userAgent: string;
}

/** How long a client is asked to wait while storage fails (the probe retries every second). */
export const STORAGE_RETRY_AFTER_S = 5;

function storageUnavailable(reason: string | null): IngestResponse {
  return {
    status: 503,
    body: { success: false, message: `the lab cannot store calls now: ${reason ?? 'storage is failing'}. Nothing of this request was kept; send it again later` },
    retryAfter: STORAGE_RETRY_AFTER_S,
  };
}

function refusedByFault(fault: FaultDecision): IngestResponse {
  const what = fault.mode === 'status' ? `answered ${fault.status}` : fault.mode === 'hang' ? 'never answered (hang)' : 'connection reset';
  return { status: fault.mode === 'status' ? fault.status : 503, body: { success: false, message: `refused by fault injection: ${what}` }, fault };
}

function delayedOverLimit(retryAfter: number): IngestResponse {
  const mb = MAX_DELAYED_BYTES / (1024 * 1024);
  const message = `delayed by fault injection, but ${mb} MB of delayed requests are already waiting (the limit): retry after ${retryAfter} s`;
  return { status: 503, body: { success: false, message }, retryAfter };
}

function strictMessage(route: IngestRequest['route'], index: number, p: ArrivingCall): string {
  const where = route === 'batch' ? `batch[${index}]` : 'call';
  const violation = p.item ? validateMessage(p.type, p.item)[0] : undefined;
  if (violation && violation.field) return `${where}.${violation.field}: ${violation.message}`;
  return `${where}: ${p.dropReason}`;
}
