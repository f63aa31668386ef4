import type { CallStatus, CallSummary, CallType, NormalizedCall, Settings, Source } from '../../../shared/types';
import { formatTimestamp } from '../../../shared/timestamp';
import { validateMessage } from '../../../shared/message-rules';
import { completeCall, readCallHead, requestItems, type CallHead, type Envelope } from '../../../shared/normalize';
import { findWriteKey } from './write-key';
import { batchItemSizes, mayHoldOversizeItem } from './batch-item-sizes';
import { ByteGate } from './byte-gate';
import { INGEST_BYTES_IN_FLIGHT, MAX_BATCH_ITEMS, MAX_CALL_BYTES } from '../../../shared/limits';
import { planDelivery } from '../dispatcher/delivery-plan';
import type { Store } from '../store/store';
import type { ActiveDelivery, NewDelivery } from '../store/deliveries.repo';
import type { RequestInfo } from '../store/requests.repo';
import { urlOutcomes } from '../store/url-states';
import type { FaultDecision, FaultInjector } from './fault-injector';

export interface IngestRequest {
  path: string;
  /** The call type a single-call route implies, or 'batch'. */
  route: CallType | 'batch';
  authorization?: string;
  contentType?: string;
  userAgent?: string;
  body: Buffer | undefined;
}

export interface IngestResponse {
  status: number;
  body: { success: boolean; message?: string };
  /** What was committed (absent when the request was refused). */
  stored?: StoredResult;
  /** Set when fault injection refused the request: the HTTP layer answers status, hangs or resets as it says. */
  fault?: FaultDecision;
}

export interface StoredResult {
  calls: CallSummary[];
  deliveries: ActiveDelivery[];
}

interface Prepared {
  /** Index in the batch; null for a single call. */
  batchIndex: number | null;
  /** What was read of a valid call; null when it is dropped as invalid. */
  head: CallHead | null;
  /**
   * The full record: given for calls the app makes itself (stored with the row); for received
   * calls built only when they may be forwarded, and otherwise rebuilt from the stored request
   * when read (RequestsRepo.normalized).
   */
  normalized: NormalizedCall | null;
  /** The request's envelope, which completeCall merges under the item. */
  envelope: Envelope;
  type: string;
  item: Record<string, unknown> | null;
  dropReason: string | null;
  /** Its messageId was added to the de-duplication window by this request. */
  remembered?: boolean;
}

const OK: IngestResponse = { status: 200, body: { success: true } };
const bad = (message: string, status = 400): IngestResponse => ({ status, body: { success: false, message } });

/**
 * The collector's logic, independent of the HTTP framework: parse, authenticate, normalize, then
 * one write-queue job that de-duplicates, stores every call (accepted or dropped with its reason)
 * and creates the delivery rows. The promise settles after COMMIT: only then is 2xx answered.
 */
export class Ingest {
  private readonly gate = new ByteGate(INGEST_BYTES_IN_FLIGHT);

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly onStored: (r: StoredResult) => void,
    /** Collector faults (README, Decisions): consulted only for a source that has them set. */
    private readonly faults?: FaultInjector,
  ) {}

  async handle(req: IngestRequest): Promise<IngestResponse> {
    const receivedAt = this.now();
    const bytes = req.body?.length ?? 0;
    const wait = this.gate.acquire(bytes);
    if (wait) await wait;
    try {
      return await this.process(req, receivedAt, bytes);
    } finally {
      this.gate.release(bytes);
    }
  }

  private async process(req: IngestRequest, receivedAt: number, bytes: number): Promise<IngestResponse> {
    const text = req.body?.toString('utf8') ?? '';
    if (text.trim() === '') return bad('request body is empty: send a JSON object');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return bad(`invalid JSON: ${(err as Error).message}`);
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return bad('request body must be a JSON object');
    const envelopeBody = body as Record<string, unknown>;
    const found = findWriteKey(req.authorization, envelopeBody);
    if (!found) return bad('missing write key: send HTTP Basic auth with the write key as user name, or "writeKey" in the body');
    // The key is known only once the body is parsed (it may be in it): faults are drawn here, one draw
    // per request with a parsed body and a source's key, whichever way the key came.
    const source = this.store.sources.byWriteKey(found.key);
    if (source?.collectorFaults && this.faults) {
      const fault = this.faults.draw(source);
      if (fault?.mode === 'delay') await this.pause(fault.delayMs ?? 0, bytes);
      else if (fault) return refusedByFault(fault);
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
    };
    if (strict) {
      const invalid = prepared.findIndex((p) => p.dropReason !== null);
      if (invalid !== -1) return bad(strictMessage(req.route, invalid, prepared[invalid]));
    }
    let stored: StoredResult;
    try {
      stored = await this.store.writes.run(() => this.persist(prepared, info, text, source, receivedAt));
    } catch (err) {
      // Rolled back: forget the ids, or the client's retry of this request would be taken for duplicates.
      if (source) for (const p of prepared) if (p.remembered && p.head) this.store.calls.dedup.remove(source.id, p.head.messageId);
      throw err;
    }
    // After COMMIT: the dispatcher may start, and the 2xx may go out.
    this.onStored(stored);
    return { ...OK, stored };
  }

  /** A delayed request waits outside the byte gate: its wait must not hold up other requests. */
  private async pause(ms: number, bytes: number): Promise<void> {
    this.gate.release(bytes);
    await new Promise((resolve) => setTimeout(resolve, ms));
    const wait = this.gate.acquire(bytes);
    if (wait) await wait;
  }

  private prepare(item: unknown, batchIndex: number | null, bytes: number, envelope: Envelope, receivedAt: number): Prepared {
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

  private persist(prepared: Prepared[], info: RequestInfo, body: string, source: Source | undefined, receivedAt: number): StoredResult {
    const settings = this.store.settings.get();
    const result: StoredResult = { calls: [], deliveries: [] };
    if (prepared.length === 0) return result;
    const { dedup } = this.store.calls;
    // The write queue may run this job again after a rollback: start from a clean window.
    if (source) for (const p of prepared) if (p.remembered && p.head) dedup.remove(source.id, p.head.messageId);
    const requestId = this.store.requests.insert(receivedAt, info, body);
    for (const p of prepared) {
      p.remembered = false;
      let dropReason = source ? p.dropReason : 'unknown write key';
      const n = p.head;
      if (!dropReason && source && n) {
        // Added here, inside the job, so a repeat later in the same batch is caught too.
        if (dedup.admit(source.id, n.messageId, receivedAt)) p.remembered = true;
        else dropReason = 'duplicate messageId';
      }
      this.storeOne(p, requestId, dropReason, source, receivedAt, settings, result);
    }
    return result;
  }

  /**
   * Calls the app makes itself (deletion notices, audience syncs, test calls): stored and forwarded
   * exactly like received ones, so the inspector shows them and the dispatcher treats them the same.
   */
  async inject(items: InternalCall[]): Promise<StoredResult> {
    const receivedAt = this.now();
    const stored = await this.store.writes.run(() => {
      const settings = this.store.settings.get();
      const result: StoredResult = { calls: [], deliveries: [] };
      for (const it of items) {
        const info: RequestInfo = { path: it.path, contentType: null, userAgent: it.userAgent, writeKeyFrom: 'none', batchSize: null };
        const requestId = this.store.requests.insert(receivedAt, info, JSON.stringify(it.call));
        const c = it.call;
        const head: CallHead = { type: c.type, messageId: c.messageId, timestampMs: Date.parse(c.timestamp), userId: c.userId ?? undefined, anonymousId: c.anonymousId ?? undefined, event: c.event, name: c.name };
        const call: Prepared = { batchIndex: null, type: c.type, head, normalized: c, envelope: {}, item: null, dropReason: null };
        this.storeOne(call, requestId, null, it.source, receivedAt, settings, result);
      }
      return result;
    });
    this.onStored(stored);
    return stored;
  }

  private storeOne(p: Prepared, requestId: number, dropReason: string | null, source: Source | undefined, receivedAt: number, settings: Settings, result: StoredResult): void {
    const h = p.head;
    const accepted = dropReason === null && h !== null && source !== undefined;
    const userId = h?.userId ?? idOf(p.item?.userId);
    const anonymousId = h?.anonymousId ?? idOf(p.item?.anonymousId);
    const label = h?.event ?? h?.name ?? idOf(p.item?.event) ?? idOf(p.item?.name);
    const messageId = h?.messageId ?? idOf(p.item?.messageId);
    const groupId = p.item ? idOf(p.item.groupId) : (p.normalized?.groupId ?? null);
    const previousId = p.item ? idOf(p.item.previousId) : (p.normalized?.previousId ?? null);
    const status: CallStatus = accepted ? 'accepted' : 'dropped';
    const sourceId = source?.id ?? null;
    // Object literals spelled out, not spread: this runs per event, and spreading into a literal with
    // more keys takes V8's slow path.
    const callId = this.store.calls.insert({
      sourceId, receivedAt, type: p.type, userId, anonymousId, label, messageId, groupId, previousId, status, dropReason,
      requestId, batchIndex: p.batchIndex, timestamp: accepted ? h.timestampMs : null, normalized: p.normalized,
    });
    let deliveryId: number | null = null;
    let urls: CallSummary['urls'] = [];
    // Most received calls are not forwarded (no Webhooks on the source): those never need their full record.
    if (accepted && source.webhooks.enabled) {
      const n = p.normalized ?? completeCall(p.item!, h, { envelope: p.envelope, receivedAt });
      const plan = planDelivery(n, source, settings);
      if (plan) {
        deliveryId = this.store.deliveries.insert(callId, source.id, n.type, plan);
        result.deliveries.push(newActive(deliveryId, callId, source.id, n, plan));
        urls = urlOutcomes(plan.urls, null);
      }
    }
    result.calls.push({
      id: callId, receivedAt: formatTimestamp(receivedAt), sourceId, sourceName: source?.name ?? null, type: p.type,
      userId, anonymousId, label, messageId, groupId, previousId, status, dropReason,
      deliveryState: accepted ? (deliveryId ? 'pending' : null) : 'dropped',
      deliveryId, attemptCount: 0, nextAttemptAt: null, latencyMs: null, urls,
    });
  }
}

export interface InternalCall {
  source: Source;
  call: NormalizedCall;
  /** Shown as the call's route in the inspector, e.g. /internal/deletion. */
  path: string;
  userAgent: string;
}

function newActive(id: number, callId: number, sourceId: string, n: NormalizedCall, { urls, body, userAgent, signature }: NewDelivery): ActiveDelivery {
  return {
    id,
    callId,
    sourceId,
    type: n.type,
    state: 'pending',
    urls,
    pendingUrls: urls.map((_, i) => i),
    round: 0,
    attemptCount: 0,
    simElapsedMs: 0,
    firstAttemptAt: null,
    nextAttemptAt: null,
    body,
    urlStates: urls.map(() => ['pending', null, 0]),
    frozen: { userAgent, signature },
  };
}

function refusedByFault(fault: FaultDecision): IngestResponse {
  const what = fault.mode === 'status' ? `answered ${fault.status}` : fault.mode === 'hang' ? 'never answered (hang)' : 'connection reset';
  return { status: fault.mode === 'status' ? fault.status : 503, body: { success: false, message: `refused by fault injection: ${what}` }, fault };
}

function idOf(v: unknown): string | null {
  return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
}

function strictMessage(route: IngestRequest['route'], index: number, p: Prepared): string {
  const where = route === 'batch' ? `batch[${index}]` : 'call';
  const violation = p.item ? validateMessage(p.type, p.item)[0] : undefined;
  if (violation && violation.field) return `${where}.${violation.field}: ${violation.message}`;
  return `${where}: ${p.dropReason}`;
}
