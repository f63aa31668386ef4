import type { CallDetail } from '../../shared/types';
import type { MockRequestRecord } from '../../shared/mock-receiver.schema';
import { describeMatch, differences, distance, formatDifferences, show, type Difference } from './match';
import type { LabApi } from './transport';
import type { CallsOptions, Lab, LabCall, LabDelivery, LabViolation, Match, WaitOptions } from './types';

// The handle startLab and connectLab give: what the lab received, read through the API contract's
// operations (listMessages and getMessage for calls, listReceiverRequests for deliveries), kept in
// arrival order, and waited on by polling. Nothing is stored here that the lab does not store: this
// only remembers what it already read (a call as received never changes).

/** Below the 5 s a Vitest or Jest test may take by default, so a wait's own message (the closest calls) is what a failing test shows. */
export const DEFAULT_TIMEOUT_MS = 4_000;
const DEFAULT_QUIET_MS = 1_000;
/** Calls' details read in one request (listMessageDetails). */
const DETAIL_PAGE = 200;
/** How long one look may read pages before a wait checks its deadline again (a lab holding many calls). */
const READ_SLICE_MS = 200;

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
  /** Only calls with an id above this (default 0: every call the lab holds); the MCP tool wait_for_call bounds what it reads with it. */
  startAfter?: number;
  /** How often a wait looks again. */
  pollMs: number;
  /**
   * Calls' details read in one request (default 200). The MCP server reads in the lab's own process,
   * where a page is one uninterrupted stretch of the event loop: it reads fewer at a time.
   */
  detailPage?: number;
  /** What stop() closes besides ending the waits (startLab: the engine and its folder). */
  close?: () => Promise<void>;
}

/** What a wait looked at: the values, the dropped calls apart, and whether more are left to read. */
interface Look<T> {
  values: T[];
  dropped: { value: T; reason: string }[];
  more: boolean;
}

interface Seen {
  id: number;
  receivedAt: string;
  call: LabCall;
  detail: CallDetail;
  /** Why the lab dropped it (unknown write key, repeated messageId, …); null when accepted or blocked. */
  dropped: string | null;
}

/**
 * The detail each call a handle returns was read from (its id, deliveries, verdicts): for a caller in
 * this package that answers with more than the call as received (the MCP tool wait_for_call). Weak:
 * a call no one holds is forgotten with it.
 */
const detailsOfCalls = new WeakMap<LabCall, CallDetail>();

/** The stored call's detail a LabCall of a handle came from; undefined for an object of another origin. */
export function detailOf(call: LabCall): CallDetail | undefined {
  return detailsOfCalls.get(call);
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

function includeDropped(what: string, options: CallsOptions | undefined): boolean {
  const value = options?.includeDropped;
  if (value !== undefined && typeof value !== 'boolean') throw new TypeError(`${what}: includeDropped: expected true or false, got ${show(value)}`);
  return value === true;
}

function checkMatch(what: string, match: unknown): void {
  if (match === undefined || match === null || (typeof match !== 'object' && typeof match !== 'function') || Array.isArray(match)) {
    throw new TypeError(`${what}: match: expected a partial object (e.g. { type: 'track', event: 'Order Completed' }) or a predicate function, got ${show(match)}`);
  }
}

export function createHandle(init: HandleInit): Lab {
  const { api } = init;
  const calls = new Map<number, Seen>();
  let maxId = init.startAfter ?? 0;
  const deliveries = new Map<string, LabDelivery & { seq: number }>();
  // Bumped by reset(): a read that began before it must not bring back what it cleared.
  let epoch = 0;
  let stopped = false;
  /**
   * When the last reset() returned (ISO time): a receiver request that arrived before it (a delivery
   * still in flight then, answered and recorded after) belongs to what was reset.
   */
  let resetAt = '';
  let readingCalls: Promise<boolean> | undefined;

  /** Reads what arrived since the last look, oldest first, for at most READ_SLICE_MS; true when more is left to read. */
  const readCalls = () => (readingCalls ??= loadCalls().finally(() => (readingCalls = undefined)));

  async function loadCalls(): Promise<boolean> {
    const at = epoch;
    // Cleared elsewhere (another handle's reset(), DELETE /api/messages, the UI's Clear, retention):
    // what this handle read is gone from the lab, so it is forgotten and read again.
    if (calls.size > 0) {
      const newest = await api('listMessages', { limit: 1, sourceId: init.sourceId });
      if (at !== epoch) return false;
      if ((newest.items[0]?.id ?? 0) < maxId || newest.total < calls.size) {
        calls.clear();
        maxId = 0;
      }
    }
    const until = Date.now() + READ_SLICE_MS;
    for (;;) {
      const page = await api('listMessageDetails', { after: maxId, limit: init.detailPage ?? DETAIL_PAGE, sourceId: init.sourceId });
      if (at !== epoch) return false;
      for (const detail of page.items) {
        const call = callOf(detail);
        const dropped = detail.call.status === 'dropped' ? (detail.call.dropReason ?? 'dropped') : null;
        if (call) {
          calls.set(detail.call.id, { id: detail.call.id, receivedAt: detail.call.receivedAt, call, detail, dropped });
          detailsOfCalls.set(call, detail);
        }
      }
      maxId = Math.max(maxId, page.next ?? 0, page.items.at(-1)?.call.id ?? 0);
      if (page.next === null) return false;
      if (Date.now() >= until) return true;
      // Between pages the loop serves what waits (in the lab's own process, its collector and API).
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async function readDeliveries(): Promise<void> {
    const at = epoch;
    const receivers = await api('listReceivers', {});
    const lists = await Promise.all(receivers.map((r) => api('listReceiverRequests', { id: r.id, limit: 1000 })));
    if (at !== epoch) return;
    for (const r of lists.flat()) if (!deliveries.has(r.id) && r.at >= resetAt) deliveries.set(r.id, { ...deliveryOf(r), seq: r.seq });
  }

  // A Map keeps insertion order, and calls are read oldest first.
  const seenCalls = () => [...calls.values()];
  const seenDeliveries = (): LabDelivery[] =>
    [...deliveries.values()]
      .sort((a, b) => a.at.localeCompare(b.at) || a.seq - b.seq)
      .map(({ seq: _seq, ...d }) => d);

  const matching = <T>(values: T[], match: Match<T> | undefined) => (match === undefined ? values : values.filter((v) => differences(match, v).length === 0));

  /** Why nothing matched: the closest values first (fewest differences, then the newest), each with its diff; then the dropped calls that would have matched. */
  function timeoutMessage<T>(head: string, match: Match<T>, look: Look<T>, summarize: (v: T) => string, hint: string): string {
    const { values } = look;
    const lines = [head, `  match: ${describeMatch(match)}`];
    if (values.length === 0) {
      lines.push(look.dropped.length ? '  nothing the lab accepted was received.' : `  nothing was received at all. ${hint}`);
    } else {
      // Those that matched (a waitForCalls short of its count) are counted in the head, not listed.
      const ranked = values
        .map((v, i) => ({ v, i, diffs: differences(match, v) as Difference[] }))
        .filter((r) => r.diffs.length > 0)
        .sort((a, b) => distance(a.diffs) - distance(b.diffs) || b.i - a.i)
        .slice(0, 3);
      // A predicate says nothing of how near a value came: the newest are listed.
      const which = typeof match === 'function' ? 'newest' : 'closest';
      if (ranked.length === 0) lines.push(`  nothing else was received (${values.length} received, all matching).`);
      else lines.push(`  the ${which} ${ranked.length === 1 ? 'one' : ranked.length} of ${values.length} received:`);
      ranked.forEach(({ v, diffs }, n) => {
        lines.push(`  ${n + 1}) ${summarize(v)}`, formatDifferences(diffs, '       '));
      });
    }
    const wouldHave = look.dropped.filter((d) => differences(match, d.value).length === 0);
    if (wouldHave.length) {
      lines.push(`  ${wouldHave.length === 1 ? 'a call' : `${wouldHave.length} calls`} matching ${wouldHave.length === 1 ? 'was' : 'were'} dropped by the lab (not counted; { includeDropped: true } counts them):`);
      wouldHave.slice(-3).forEach((d, n) => lines.push(`  ${n + 1}) ${summarize(d.value)}, dropped: ${d.reason}`));
    }
    if (look.more) lines.push(`  (the lab holds more calls than could be read within the timeout: ${values.length + look.dropped.length} read so far)`);
    return lines.join('\n');
  }

  async function waitFor<T>(what: string, read: () => Promise<Look<T>>, match: Match<T>, count: number, timeoutMs: number, summarize: (v: T) => string, hint: string): Promise<T[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (stopped) throw stoppedError(what);
      const look = await read();
      const found = matching(look.values, match);
      if (found.length >= count) return found;
      const left = deadline - Date.now();
      if (left <= 0) {
        const want = count === 1 ? 'no' : `${found.length} of ${count}`;
        throw new LabTimeoutError(timeoutMessage(`${what}: ${want} ${what === 'waitForDelivery' ? 'deliveries' : 'calls'} matched within ${timeoutMs} ms`, match, look, summarize, hint), look.values.length);
      }
      // More calls are waiting to be read: read on at once.
      if (!look.more) await sleep(Math.min(init.pollMs, left));
    }
  }

  const stoppedError = (what: string) => new Error(`${what}: the lab was stopped (stop() was called); start or connect another lab`);

  /** Runs a method: refused once the lab is stopped, and what stop() cut short (a closed database) says so. */
  async function guarded<T>(what: string, run: () => Promise<T>): Promise<T> {
    if (stopped) throw stoppedError(what);
    try {
      return await run();
    } catch (err) {
      if (stopped && !(err instanceof Error && err.message.startsWith(`${what}: the lab was stopped`))) throw Object.assign(stoppedError(what), { cause: err });
      throw err;
    }
  }

  /** Calls as read so far (all of them when `all`); dropped ones apart unless included. */
  const callsLook = async (includeDropped: boolean, all = false): Promise<Look<LabCall>> => {
    let more = await readCalls();
    while (all && more) more = await readCalls();
    const seen = seenCalls();
    return {
      values: seen.filter((c) => includeDropped || c.dropped === null).map((c) => c.call),
      dropped: includeDropped ? [] : seen.flatMap((c) => (c.dropped === null ? [] : [{ value: c.call, reason: c.dropped }])),
      more,
    };
  };
  const deliveriesLook = async (): Promise<Look<LabDelivery>> => {
    await readDeliveries();
    return { values: seenDeliveries(), dropped: [], more: false };
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

    calls(match, options?: CallsOptions) {
      return guarded('calls', async () => {
        if (match !== undefined) checkMatch('calls', match);
        return matching((await callsLook(includeDropped('calls', options), true)).values, match);
      });
    },

    waitForCall(match, options: WaitOptions & CallsOptions = {}) {
      return guarded('waitForCall', async () => {
        checkMatch('waitForCall', match);
        const timeoutMs = checkTimeout('waitForCall: timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS);
        const withDropped = includeDropped('waitForCall', options);
        return (await waitFor('waitForCall', () => callsLook(withDropped), match, 1, timeoutMs, summarizeCall, noCallsHint))[0];
      });
    },

    waitForCalls(match, options) {
      return guarded('waitForCalls', async () => {
        checkMatch('waitForCalls', match);
        const count = options?.count;
        if (typeof count !== 'number' || !Number.isInteger(count) || count < 1) throw new TypeError(`waitForCalls: count: expected a whole number ≥ 1, got ${show(count)}`);
        const timeoutMs = checkTimeout('waitForCalls: timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS);
        const withDropped = includeDropped('waitForCalls', options);
        return waitFor('waitForCalls', () => callsLook(withDropped), match, count, timeoutMs, summarizeCall, noCallsHint);
      });
    },

    expectNoCall(match, options = {}) {
      return guarded('expectNoCall', async () => {
        checkMatch('expectNoCall', match);
        const forMs = checkTimeout('expectNoCall: forMs', options.forMs, DEFAULT_QUIET_MS);
        const withDropped = includeDropped('expectNoCall', options);
        const deadline = Date.now() + forMs;
        for (;;) {
          const look = await callsLook(withDropped);
          const found = matching(look.values, match);
          if (found.length > 0) {
            const c = found[0];
            throw new Error(`expectNoCall: a call matching was received: ${summarizeCall(c)}\n  match: ${describeMatch(match)}\n  call:  ${show(c)}`);
          }
          if (stopped) throw new Error(`expectNoCall: the lab was stopped before forMs (${forMs} ms) had passed, so it cannot say no call came`);
          const left = deadline - Date.now();
          if (left <= 0 && !look.more) return;
          if (!look.more) await sleep(Math.min(init.pollMs, left));
        }
      });
    },

    deliveries(match) {
      return guarded('deliveries', async () => {
        if (match !== undefined) checkMatch('deliveries', match);
        return matching((await deliveriesLook()).values, match);
      });
    },

    waitForDelivery(match, options: WaitOptions = {}) {
      return guarded('waitForDelivery', async () => {
        checkMatch('waitForDelivery', match);
        const timeoutMs = checkTimeout('waitForDelivery: timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS);
        return (await waitFor('waitForDelivery', deliveriesLook, match, 1, timeoutMs, summarizeDelivery, noDeliveriesHint))[0];
      });
    },

    violations(match) {
      return guarded('violations', async () => {
        if (match !== undefined) checkMatch('violations', match);
        const plans = await api('listTrackingPlans', {});
        const connected = plans.some((p) => p.sources.some((s) => init.sourceId === undefined || s.sourceId === init.sourceId));
        if (!connected) throw new Error('violations: no source of this lab is connected to a tracking plan; give startLab `trackingPlans` and a source\'s `trackingPlan: { name }` (docs/tracking-plans.md)');
        await callsLook(false, true);
        const found: LabViolation[] = seenCalls()
          .filter((s) => (s.detail.violations?.length ?? 0) > 0 || s.detail.planCheck?.blocked)
          .map((s) => ({ call: s.call, violations: s.detail.violations ?? [], blocked: s.detail.planCheck?.blocked ?? null, plan: s.detail.planCheck?.planName ?? null }));
        return matching(found, match);
      });
    },

    reset() {
      return guarded('reset', () => resetLab());
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      await init.close?.();
    },
  };

  async function resetLab(): Promise<void> {
    epoch++;
    await api('clearCalls', {});
    const receivers = await api('listReceivers', {});
    await Promise.all(receivers.map((r) => api('resetReceiver', { id: r.id })));
    calls.clear();
    deliveries.clear();
    maxId = 0;
    resetAt = new Date().toISOString();
    epoch++;
  }
}
