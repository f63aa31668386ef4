import type { CallDetail } from '../../shared/types';
import type { MockRequestRecord } from '../../shared/mock-receiver.schema';
import { describeMatch, differences, distance, formatDifferences, show, type Difference } from './match';
import { LabApiError, type LabApi } from './transport';
import type { Lab, LabCall, LabDelivery, LabViolation, Match, WaitOptions } from './types';

// The handle startLab and connectLab give: what the lab received, read through the API contract's
// operations (listMessages and getMessage for calls, listReceiverRequests for deliveries), kept in
// arrival order, and waited on by polling. Nothing is stored here that the lab does not store: this
// only remembers what it already read (a call as received never changes).

const DEFAULT_TIMEOUT_MS = 5_000;
const DEFAULT_QUIET_MS = 1_000;
/** Details read at once when many calls arrived since the last look. */
const DETAIL_CONCURRENCY = 16;

export interface HandleInit {
  api: LabApi;
  collectorUrl: string;
  writeKey: string;
  sources: Lab['sources'];
  apiUrl: string | null;
  token: string | null;
  uiUrl: string | null;
  /** Only this source's calls (connectLab's `source`). */
  sourceId?: string;
  /** How often a wait looks again. */
  pollMs: number;
  /** What stop() closes besides ending the waits (startLab: the engine and its folder). */
  close?: () => Promise<void>;
}

interface Seen {
  id: number;
  receivedAt: string;
  call: LabCall;
  detail: CallDetail;
}

/** A wait that ended without a match: the message lists the closest values seen and how each differs. */
export class LabTimeoutError extends Error {
  constructor(
    message: string,
    /** Values seen when it gave up (calls or deliveries). */
    readonly seen: number,
  ) {
    super(message);
    this.name = 'LabTimeoutError';
  }
}

/** The call as the client sent it, with the route's `type` when the body had none; null when it was not a JSON object. */
function callOf(detail: CallDetail): LabCall | null {
  let raw: unknown = detail.call.raw;
  if (raw === null && detail.call.rawText !== undefined) {
    try {
      raw = JSON.parse(detail.call.rawText);
    } catch {
      return null;
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const obj = raw as Record<string, unknown>;
  return (typeof obj.type === 'string' ? obj : { type: detail.call.type, ...obj }) as LabCall;
}

function deliveryOf(r: MockRequestRecord): LabDelivery {
  let body: unknown = r.body;
  try {
    body = JSON.parse(r.body);
  } catch {
    // not JSON: its text
  }
  return {
    receiver: r.receiverName,
    receiverId: r.receiverId,
    at: r.at,
    method: r.method,
    path: r.path,
    headers: r.headers,
    body,
    status: r.response.status,
    signature: r.signature.state,
    standardWebhooks: r.standardWebhooks?.state ?? 'not_checked',
    signatureReason: r.signature.reason ?? r.standardWebhooks?.reason ?? null,
  };
}

function summarizeCall(c: LabCall): string {
  const label = typeof c.event === 'string' ? ` ${JSON.stringify(c.event)}` : typeof c.name === 'string' ? ` ${JSON.stringify(c.name)}` : '';
  const who = typeof c.userId === 'string' ? `userId ${JSON.stringify(c.userId)}` : typeof c.anonymousId === 'string' ? `anonymousId ${JSON.stringify(c.anonymousId)}` : 'no userId';
  return `${c.type}${label} (${who})`;
}

function summarizeDelivery(d: LabDelivery): string {
  return `${d.method} ${d.path} to receiver ${JSON.stringify(d.receiver)} → ${d.status ?? 'no answer'}, signature ${d.signature}`;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function checkTimeout(what: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new TypeError(`${what}: expected a number of milliseconds ≥ 0, got ${show(value)}`);
  return value;
}

function checkMatch(what: string, match: unknown): void {
  if (match === undefined || match === null || (typeof match !== 'object' && typeof match !== 'function') || Array.isArray(match)) {
    throw new TypeError(`${what}: match: expected a partial object (e.g. { type: 'track', event: 'Order Completed' }) or a predicate function, got ${show(match)}`);
  }
}

export function createHandle(init: HandleInit): Lab {
  const { api } = init;
  const calls = new Map<number, Seen>();
  let maxId = 0;
  const deliveries = new Map<string, LabDelivery & { seq: number }>();
  // Bumped by reset(): a read that began before it must not bring back what it cleared.
  let epoch = 0;
  let stopped = false;
  let readingCalls: Promise<void> | undefined;

  const readCalls = () => (readingCalls ??= loadCalls().finally(() => (readingCalls = undefined)));

  async function loadCalls(): Promise<void> {
    const at = epoch;
    const fresh: { id: number; receivedAt: string }[] = [];
    let before: number | undefined;
    // A look while nothing new arrived costs one small page; a page of only new calls asks for more.
    let limit = 20;
    for (;;) {
      const page = await api('listMessages', { limit, before, sourceId: init.sourceId });
      limit = 500;
      for (const s of page.items) if (s.id > maxId) fresh.push({ id: s.id, receivedAt: s.receivedAt });
      const last = page.items.at(-1);
      if (page.next === null || !last || last.id <= maxId) break;
      before = page.next;
    }
    fresh.sort((a, b) => a.id - b.id);
    for (let i = 0; i < fresh.length; i += DETAIL_CONCURRENCY) {
      const details = await Promise.all(
        fresh.slice(i, i + DETAIL_CONCURRENCY).map((f) =>
          api('getMessage', { id: f.id }).catch((err: unknown) => {
            // Deleted meanwhile (reset, retention): it is gone from the lab too.
            if (err instanceof LabApiError && err.status === 404) return null;
            throw err;
          }),
        ),
      );
      if (at !== epoch) return;
      for (const detail of details) {
        if (!detail) continue;
        const call = callOf(detail);
        if (call) calls.set(detail.call.id, { id: detail.call.id, receivedAt: detail.call.receivedAt, call, detail });
      }
    }
    if (at === epoch && fresh.length) maxId = Math.max(maxId, fresh[fresh.length - 1].id);
  }

  async function readDeliveries(): Promise<void> {
    const at = epoch;
    const receivers = await api('listReceivers', {});
    const lists = await Promise.all(receivers.map((r) => api('listReceiverRequests', { id: r.id, limit: 1000 })));
    if (at !== epoch) return;
    for (const r of lists.flat()) if (!deliveries.has(r.id)) deliveries.set(r.id, { ...deliveryOf(r), seq: r.seq });
  }

  const seenCalls = () => [...calls.values()].sort((a, b) => a.id - b.id);
  const seenDeliveries = (): LabDelivery[] =>
    [...deliveries.values()]
      .sort((a, b) => a.at.localeCompare(b.at) || a.seq - b.seq)
      .map(({ seq: _seq, ...d }) => d);

  const matching = <T>(values: T[], match: Match<T> | undefined) => (match === undefined ? values : values.filter((v) => differences(match, v).length === 0));

  /** Why nothing matched: the closest values first (fewest differences, then the newest), each with its diff. */
  function timeoutMessage<T>(head: string, match: Match<T>, values: T[], summarize: (v: T) => string, hint: string): string {
    const lines = [head, `  match: ${describeMatch(match)}`];
    if (values.length === 0) {
      lines.push(`  nothing was received at all. ${hint}`);
      return lines.join('\n');
    }
    const ranked = values
      .map((v, i) => ({ v, i, diffs: differences(match, v) as Difference[] }))
      .sort((a, b) => distance(a.diffs) - distance(b.diffs) || b.i - a.i)
      .slice(0, 3);
    // A predicate says nothing of how near a value came: the newest are listed.
    const which = typeof match === 'function' ? 'newest' : 'closest';
    lines.push(`  the ${which} ${ranked.length === 1 ? 'one' : ranked.length} of ${values.length} received:`);
    ranked.forEach(({ v, diffs }, n) => {
      lines.push(`  ${n + 1}) ${summarize(v)}`, formatDifferences(diffs, '       '));
    });
    return lines.join('\n');
  }

  async function waitFor<T>(what: string, read: () => Promise<T[]>, match: Match<T>, count: number, timeoutMs: number, summarize: (v: T) => string, hint: string): Promise<T[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (stopped) throw new Error(`${what}: the lab was stopped while waiting`);
      const all = await read();
      const found = matching(all, match);
      if (found.length >= count) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        const want = count === 1 ? 'no' : `${found.length} of ${count}`;
        throw new LabTimeoutError(timeoutMessage(`${what}: ${want} ${what === 'waitForDelivery' ? 'deliveries' : 'calls'} matched within ${timeoutMs} ms`, match, all, summarize, hint), all.length);
      }
      await sleep(Math.min(init.pollMs, left));
    }
  }

  const callsNow = async () => {
    await readCalls();
    return seenCalls().map((s) => s.call);
  };
  const deliveriesNow = async () => {
    await readDeliveries();
    return seenDeliveries();
  };
  const noCallsHint = `Is the app sending to ${init.collectorUrl} with write key ${init.writeKey}?`;
  const noDeliveriesHint = 'Deliveries are what the lab\'s receivers got: give startLab `receivers` (they are attached to its first source), or check that the source sends to a receiver\'s URL.';

  return {
    collectorUrl: init.collectorUrl,
    writeKey: init.writeKey,
    sources: init.sources,
    apiUrl: init.apiUrl,
    token: init.token,
    uiUrl: init.uiUrl,

    async calls(match) {
      if (match !== undefined) checkMatch('calls', match);
      return matching(await callsNow(), match);
    },

    async waitForCall(match, options: WaitOptions = {}) {
      checkMatch('waitForCall', match);
      const timeoutMs = checkTimeout('waitForCall: timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS);
      return (await waitFor('waitForCall', callsNow, match, 1, timeoutMs, summarizeCall, noCallsHint))[0];
    },

    async waitForCalls(match, options) {
      checkMatch('waitForCalls', match);
      const count = options?.count;
      if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) throw new TypeError(`waitForCalls: count: expected a whole number ≥ 1, got ${show(count)}`);
      const timeoutMs = checkTimeout('waitForCalls: timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS);
      return waitFor('waitForCalls', callsNow, match, count, timeoutMs, summarizeCall, noCallsHint);
    },

    async expectNoCall(match, options = {}) {
      checkMatch('expectNoCall', match);
      const forMs = checkTimeout('expectNoCall: forMs', options.forMs, DEFAULT_QUIET_MS);
      const deadline = Date.now() + forMs;
      for (;;) {
        const found = matching(await callsNow(), match);
        if (found.length > 0) {
          const c = found[0];
          throw new Error(`expectNoCall: a call matching was received: ${summarizeCall(c)}\n  match: ${describeMatch(match)}\n  call:  ${show(c)}`);
        }
        const left = deadline - Date.now();
        if (left <= 0 || stopped) return;
        await sleep(Math.min(init.pollMs, left));
      }
    },

    async deliveries(match) {
      if (match !== undefined) checkMatch('deliveries', match);
      return matching(await deliveriesNow(), match);
    },

    async waitForDelivery(match, options: WaitOptions = {}) {
      checkMatch('waitForDelivery', match);
      const timeoutMs = checkTimeout('waitForDelivery: timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS);
      return (await waitFor('waitForDelivery', deliveriesNow, match, 1, timeoutMs, summarizeDelivery, noDeliveriesHint))[0];
    },

    async violations(match) {
      if (match !== undefined) checkMatch('violations', match);
      const plans = await api('listTrackingPlans', {});
      const connected = plans.some((p) => p.sources.some((s) => init.sourceId === undefined || s.sourceId === init.sourceId));
      if (!connected) throw new Error('violations: no source of this lab is connected to a tracking plan; give startLab `trackingPlans` and a source\'s `trackingPlan: { name }` (docs/tracking-plans.md)');
      await readCalls();
      const found: LabViolation[] = seenCalls()
        .filter((s) => (s.detail.violations?.length ?? 0) > 0 || s.detail.planCheck?.blocked)
        .map((s) => ({ call: s.call, violations: s.detail.violations ?? [], blocked: s.detail.planCheck?.blocked ?? null, plan: s.detail.planCheck?.planName ?? null }));
      return matching(found, match);
    },

    async reset() {
      epoch++;
      await api('clearCalls', {});
      const receivers = await api('listReceivers', {});
      await Promise.all(receivers.map((r) => api('resetReceiver', { id: r.id })));
      calls.clear();
      deliveries.clear();
      maxId = 0;
      epoch++;
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      await init.close?.();
    },
  };
}
