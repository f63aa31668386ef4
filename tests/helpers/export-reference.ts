// The export as it was built before issue 38 (git 2ae17ad, src/main/engine/simulation/export.ts),
// kept verbatim as the reference the streamed export must equal byte for byte: every matching id read
// at the open, then pages of 200 calls (JSON Lines) or a sort of every attempt at once (HAR). Also
// what the export bench runs as its "before" (bench/lib/export.mjs cannot: it runs the built app).

import { setImmediate as nextTurn } from 'node:timers/promises';
import { DELIVERY_FILTERS, type OpParsed } from '../../src/shared/api.contract';
import type { CallFilter } from '../../src/main/engine/store/calls.repo';
import type { Store } from '../../src/main/engine/store/store';
import type { TrackingPlans } from '../../src/main/engine/tracking-plans/service';
import { forwardingOf } from '../../src/main/engine/forwarding';
import { withAnsweredAttempts } from '../../src/main/engine/in-flight-attempts';
import { harEntry, harHead, HAR_TAIL } from '../../src/main/engine/simulation/export-har';
import { VERSION } from '../../src/main/engine/version';

type ExportInput = OpParsed<'exportDeliveries'>;

const PAGE = 200;
const ORDER_CHUNK = 5_000;

/** The old export's text, a page at a time. */
export function referenceChunks(store: Store, plans: TrackingPlans, input: ExportInput): AsyncGenerator<string> {
  const ids = store.calls.ids({ ...toFilter(input), limit: input.limit });
  ids.reverse();
  return input.format === 'jsonl' ? jsonLines(store, plans, ids) : harText(store, ids);
}

/** The old export's whole text. */
export async function referenceText(store: Store, plans: TrackingPlans, input: ExportInput): Promise<string> {
  const parts: string[] = [];
  for await (const chunk of referenceChunks(store, plans, input)) parts.push(chunk);
  return parts.join('');
}

async function* jsonLines(store: Store, plans: TrackingPlans, ids: number[]): AsyncGenerator<string> {
  for (let i = 0; i < ids.length; i += PAGE) {
    if (i > 0) await nextTurn();
    let text = '';
    const page = ids.slice(i, i + PAGE);
    const urls = new Map(store.calls.summaries(page).map((s) => [s.id, s.urls]));
    for (const id of page) {
      const call = store.calls.get(id);
      if (!call) continue;
      const { violations, planCheck } = plans.detailOf(id, call.status);
      const callUrls = urls.get(id) ?? [];
      const deliveries = withAnsweredAttempts(store, store.deliveries.forCall(id, { pageBatches: 'unlessFirst' }));
      text += `${JSON.stringify({ call, urls: callUrls, deliveries, violations, planCheck, forwarding: forwardingOf(store, call, deliveries.length, callUrls) })}\n`;
    }
    if (text) yield text;
  }
}

async function* harText(store: Store, callIds: number[]): AsyncGenerator<string> {
  yield harHead(VERSION);
  const order: [number, number][] = [];
  for (let i = 0; i < callIds.length; i += ORDER_CHUNK) {
    await nextTurn();
    for (const pair of store.deliveries.attemptTimes(callIds.slice(i, i + ORDER_CHUNK))) order.push(pair);
  }
  order.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let first = true;
  for (let i = 0; i < order.length; i += PAGE) {
    await nextTurn();
    const page = order.slice(i, i + PAGE).map((pair) => pair[1]);
    const found = store.deliveries.attemptsById(page);
    let text = '';
    for (const id of page) {
      const a = found.get(id);
      if (!a) continue;
      text += (first ? '' : ',') + JSON.stringify(harEntry({ id: a.callId, messageId: a.messageId }, a.attempt, a.sentBody));
      first = false;
    }
    if (text) yield text;
  }
  yield HAR_TAIL;
}

function toFilter(input: ExportInput): Omit<CallFilter, 'limit'> {
  const status = input.status || undefined;
  if (status !== undefined && !(DELIVERY_FILTERS as readonly string[]).includes(status)) throw new Error(`bad status ${status}`);
  return {
    sourceId: input.sourceId || undefined,
    type: input.type || undefined,
    status: status as CallFilter['status'],
    urlState: input.urlState,
    userId: input.userId || undefined,
    q: input.q || undefined,
    body: input.body,
  };
}
