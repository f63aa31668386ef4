import type { ActionsMapping, CallStatus, CallSummary, NormalizedCall, Source } from '../../../shared/types';
import { completeCall, type CallHead, type Envelope } from '../../../shared/normalize';
import type { CallsRepo, NewCall } from './calls.repo';
import type { ActiveDelivery, NewActionsDelivery, NewDelivery } from './delivery.types';
import type { DeliveryLedger } from './delivery-ledger';
import type { ActionsLedger } from './actions-ledger';
import { deliveryPart, waitingPart } from './actions-outcomes';
import { withActions, type ActionsPart } from './call-summary';
import type { RequestInfo, RequestsRepo } from './requests.repo';
import type { WriteQueue, WriteTx } from './write-queue';
import { callSummary } from './call-summary';
import { withoutOmitted, type PlanVerdict } from '../../../shared/tracking-plan.schema';

// The call ledger's one way in: the calls of an arriving request, stored with their delivery rows in
// one write-queue job. Its promise settles after COMMIT, which is what lets the collector answer 2xx
// only once every accepted call, and the delivery that will forward it, is durable.

/** One call as the collector read it (or as the app made it), before it is stored. */
export interface ArrivingCall {
  /** Index in the batch; null for a single call. */
  batchIndex: number | null;
  /** What was read of a valid call; null when it is dropped as invalid. */
  head: CallHead | null;
  /**
   * The full record: given for calls the app makes itself (stored with the row); for received calls
   * built here only when they are forwarded, and otherwise rebuilt from the stored request when read
   * (RequestsRepo.normalized).
   */
  normalized: NormalizedCall | null;
  /** The request's envelope, which completeCall merges under the item. */
  envelope: Envelope;
  type: string;
  item: Record<string, unknown> | null;
  dropReason: string | null;
  /** Its messageId was added to the de-duplication window by this request. */
  remembered?: boolean;
  /** What its source's tracking plan made of it (absent: the source has no plan): blocked, omitted, violations. */
  verdict?: PlanVerdict;
}

export interface Arrival {
  receivedAt: number;
  info: RequestInfo;
  /** The request body as received, stored once (requests.repo.ts). */
  body: string;
  /** The source its write key names; undefined when the key is unknown (its calls are stored dropped). */
  source: Source | undefined;
  calls: ArrivingCall[];
  /** Received calls are de-duplicated by messageId (SPEC §3); calls the app makes itself are not. */
  deduplicate: boolean;
  /** Writes a checked call's verdict in the same job (tracking plans, issue 24), for calls with something to say (a clean call has no row). */
  recordVerdict?: (callId: number, sourceId: string, call: ArrivingCall, receivedAt: number, label: string | null) => void;
  /** Notes, once per request, that its calls were checked (those with a verdict): what tells a clean call from one never checked. */
  recordChecked?: (requestId: number, sourceId: string, receivedAt: number, calls: ArrivingCall[]) => void;
}

export interface StoredResult {
  calls: CallSummary[];
  /** The deliveries created, for the dispatcher to start once the job has committed. */
  deliveries: ActiveDelivery[];
  /** Actions batches that items were queued in (at most one entry per batch), for the batcher to check. */
  batched: { sourceId: string; mapping: string }[];
}

/**
 * How a source's accepted calls are forwarded: the dispatcher's rule, handed in from outside (engine.ts
 * wires dispatcher/delivery-plan.ts), so the store records deliveries without knowing how they are
 * planned. Asked once per request: null when the source forwards nothing (most received calls, which
 * then never need their full record), else the plan of each call (null for one not forwarded).
 */
export type DeliveryPlanner = (source: Source) => SourcePlan | null;

/** How one source's calls are forwarded; each part null when the source does not send it (its mode). */
export interface SourcePlan {
  /** The Classic delivery of a call; null for one not forwarded. */
  classic: ((call: NormalizedCall) => NewDelivery | null) | null;
  /** The Actions deliveries and batch items of a call; null when no mapping takes it. */
  actions: ((call: NormalizedCall) => ActionsPlan | null) | null;
}

/** A call's Actions requests: its own deliveries (callIds filled in here) and items for batched mappings. */
export interface ActionsPlan {
  deliveries: NewActionsDelivery[];
  /** target: the JSON of the url and headers a directive resolved to for this call, '' for a mapping's literal ones. */
  items: { mapping: ActionsMapping; data: string; target: string }[];
}

export interface LedgerTables {
  writes: WriteQueue;
  requests: RequestsRepo;
  calls: CallsRepo;
  /** Where the deliveries and batch items are created (delivery-ledger.ts). */
  ledger: DeliveryLedger;
  actions: ActionsLedger;
}

/**
 * Stores these requests' calls (accepted, or dropped with their reason) and the deliveries of those
 * forwarded, in one write job: de-duplicates, writes the request rows, the call rows and the
 * delivery rows, and returns what the inspector and the dispatcher need, built from what was written.
 */
export async function recordArrivals(t: LedgerTables, arrivals: Arrival[], planner: DeliveryPlanner): Promise<StoredResult> {
  // Just after a start, the window may still be filling from the database (CallsRepo.dedupReady).
  if (!t.calls.dedupLoaded) await t.calls.dedupReady();
  // Rolled back: forget the ids at once, or the client's retry of this request (or another request
  // of the same turn, run again after this one) would be taken for duplicates.
  return t.writes.run(
    (tx) => {
      const result: StoredResult = { calls: [], deliveries: [], batched: [] };
      for (const a of arrivals) record(t, tx, a, planner, result);
      return result;
    },
    () => {
      for (const a of arrivals) forget(t, a);
    },
  );
}

/** Takes this request's ids back out of the window; each once (`remembered` cleared), so a later call's id is never taken. */
function forget(t: LedgerTables, a: Arrival): void {
  if (!a.source) return;
  for (const c of a.calls) {
    if (c.remembered && c.head) t.calls.dedup.remove(a.source.id, c.head.messageId);
    c.remembered = false;
  }
}

function record(t: LedgerTables, tx: WriteTx, a: Arrival, planner: DeliveryPlanner, result: StoredResult): void {
  if (a.calls.length === 0) return;
  const { source, receivedAt } = a;
  const plan = source ? planner(source) : null;
  const requestId = t.requests.insert(receivedAt, a.info, a.body);
  // Calls the plan's verdict stands for: a duplicate messageId is dropped before the plan is asked
  // (as Segment de-duplicates before Protocols), so it counts in no violation, check or example.
  const checked: ArrivingCall[] = [];
  for (const c of a.calls) {
    c.remembered = false;
    let dropReason = source ? c.dropReason : 'unknown write key';
    const h = c.head;
    if (a.deduplicate && !dropReason && source && h) {
      // Added here, inside the job, so a repeat later in the same batch is caught too.
      if (t.calls.dedup.admit(source.id, h.messageId, receivedAt)) c.remembered = true;
      else dropReason = 'duplicate messageId';
    }
    storeOne(t, tx, c, requestId, dropReason, source, receivedAt, plan, result, a.recordVerdict);
    if (dropReason === null) checked.push(c);
  }
  // Right after its request's row, in the same job: checked_requests is written in request order (plans.repo.ts, seen_by).
  if (a.recordChecked && source) a.recordChecked(requestId, source.id, receivedAt, checked);
}

function storeOne(
  t: LedgerTables,
  tx: WriteTx,
  p: ArrivingCall,
  requestId: number,
  dropReason: string | null,
  source: Source | undefined,
  receivedAt: number,
  plan: SourcePlan | null,
  result: StoredResult,
  recordVerdict?: Arrival['recordVerdict'],
): void {
  const h = p.head;
  const accepted = dropReason === null && h !== null && source !== undefined;
  // A dropped call (a duplicate messageId) keeps no verdict: the plan never judged it.
  const v = accepted ? p.verdict : undefined;
  // Blocked by its source's tracking plan: stored with the reason, never forwarded (not dropped: the plan worked).
  const blocked = v?.blocked ? `blocked by tracking plan: ${v.blocked}` : null;
  const status: CallStatus = blocked ? 'blocked' : accepted ? 'accepted' : 'dropped';
  const sourceId = source?.id ?? null;
  // Object literals spelled out, not spread: this runs per event, and spreading into a literal with
  // more keys takes V8's slow path.
  const row: NewCall = {
    sourceId,
    receivedAt,
    type: p.type,
    userId: h?.userId ?? idOf(p.item?.userId),
    anonymousId: h?.anonymousId ?? idOf(p.item?.anonymousId),
    label: h?.event ?? h?.name ?? idOf(p.item?.event) ?? idOf(p.item?.name),
    messageId: h?.messageId ?? idOf(p.item?.messageId),
    groupId: p.item ? idOf(p.item.groupId) : (p.normalized?.groupId ?? null),
    previousId: p.item ? idOf(p.item.previousId) : (p.normalized?.previousId ?? null),
    status,
    dropReason: blocked ?? dropReason,
    violations: v ? v.violations.length : null,
    requestId,
    batchIndex: p.batchIndex,
    timestamp: accepted ? h.timestampMs : null,
    normalized: p.normalized,
  };
  const callId = t.calls.insert(row);
  if (v && recordVerdict && source && (v.violations.length > 0 || v.blocked !== null || v.omitted.length > 0)) recordVerdict(callId, source.id, p, receivedAt, row.label);
  let delivery: ActiveDelivery | null = null;
  let actions: ActionsPart[] | null = null;
  // Most received calls are not forwarded (plan is null): those never need their full record.
  if (accepted && plan && !blocked) {
    const whole = p.normalized ?? completeCall(p.item!, h, { envelope: p.envelope, receivedAt });
    // Properties the plan omits are left out of what is forwarded; the stored call keeps them.
    const n = v?.omitted.length ? withoutOmitted(whole, v.omitted) : whole;
    const planned = plan.classic && plan.classic(n);
    if (planned) {
      delivery = t.ledger.create(tx, callId, source.id, n.type, planned);
      result.deliveries.push(delivery);
    }
    const a = plan.actions && plan.actions(n);
    if (a) actions = storeActions(t, tx, a, callId, source.id, n, receivedAt, result);
  }
  const summary = callSummary(callId, row, source?.name ?? null, delivery, undefined);
  result.calls.push(actions ? withActions(summary, actions) : summary);
}

/** A call's Actions deliveries and batch items, written with it; returns the parts its summary shows. */
function storeActions(t: LedgerTables, tx: WriteTx, a: ActionsPlan, callId: number, sourceId: string, n: NormalizedCall, at: number, result: StoredResult): ActionsPart[] {
  const parts: ActionsPart[] = [];
  for (const planned of a.deliveries) {
    planned.callIds = [callId];
    const d = t.ledger.createActions(tx, sourceId, n.type, planned);
    if (planned.notSent !== undefined) {
      // Its mapped body passed the limit: created failed, with the reason, and never handed to the dispatcher.
      parts.push(deliveryPart({ ...d, mapping: planned.mapping, item: 0 }, undefined));
      continue;
    }
    result.deliveries.push(d);
    parts.push(deliveryPart({ ...d, mapping: planned.mapping, item: 0, urlStates: null }, undefined));
  }
  for (const item of a.items) {
    const name = item.mapping.name;
    t.ledger.queueItem(tx, sourceId, callId, { mapping: name, data: item.data, target: item.target }, at);
    if (!result.batched.some((b) => b.sourceId === sourceId && b.mapping === name)) result.batched.push({ sourceId, mapping: name });
    parts.push(waitingPart(name, item.mapping, t.actions.group(sourceId, name)?.count ?? 1));
  }
  return parts;
}

function idOf(v: unknown): string | null {
  return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
}
