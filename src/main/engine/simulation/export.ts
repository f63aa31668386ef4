import { setImmediate as nextTurn } from 'node:timers/promises';
import { trackingPlansOf } from '../tracking-plans/service';
import { forwardingOf } from '../forwarding';
import { withAnsweredAttempts } from '../in-flight-attempts';
import { DELIVERY_FILTERS, type OpParsed } from '../../../shared/api.contract';
import type { ExportFile } from '../../../shared/simulation.contract';
import { ValidationError } from '../../../shared/validation-error';
import type { CallFilter } from '../store/calls.repo';
import type { Store } from '../store/store';
import { VERSION } from '../version';
import { harEntry, harHead, HAR_TAIL } from './export-har';
import type { Feature, SimulationDeps } from './simulation-deps';

type ExportInput = OpParsed<'exportDeliveries'>;

/** An export as it is written: the file's name and type, then its text a piece at a time. */
export interface ExportStream {
  filename: string;
  contentType: string;
  chunks: AsyncIterable<string>;
}

/**
 * Calls (JSON Lines) or attempts (HAR) read per piece. Between pieces the engine goes back to its
 * event loop, so an export of 200,000 calls does not hold up the collector, and the text is never
 * all in memory when it is streamed (GET /api/export/file).
 */
const PAGE = 200;
/** Calls whose attempt times are read at once, for the order of a HAR export. */
const ORDER_CHUNK = 5_000;

/**
 * Export of the inspector's history (issue 5): JSON Lines, one line per call in the shape of
 * `GET /api/messages/:id` (the call as received and normalized, its delivery and every attempt),
 * or HAR 1.2 with one entry per attempt. Filters are those of listMessages; the newest `limit`
 * matching calls are exported, oldest first.
 */
export class Exporter implements Feature<'exportDeliveries'> {
  constructor(private readonly deps: SimulationDeps) {}

  handlers() {
    return { exportDeliveries: (input: ExportInput) => this.export(input) };
  }

  /** The whole file as one string: the API operation (and so IPC). Large exports: `open` streams. */
  async export(input: ExportInput): Promise<ExportFile> {
    const stream = this.open(input);
    const parts: string[] = [];
    for await (const chunk of stream.chunks) parts.push(chunk);
    return { filename: stream.filename, contentType: stream.contentType, content: parts.join('') };
  }

  /**
   * Which calls is decided now (a bad filter throws here, before anything is sent); what is read of
   * them, as the text is pulled. A call deleted meanwhile (retention, a purge) is left out.
   */
  open(input: ExportInput): ExportStream {
    const { store } = this.deps;
    const filter = toFilter(input);
    // One query (the repo's own filter, so the export matches the inspector's list), newest first.
    const ids = store.calls.ids({ ...filter, limit: input.limit });
    ids.reverse();
    const stamp = new Date(this.deps.now()).toISOString().replace(/[:.]/g, '-');
    return input.format === 'jsonl'
      ? { filename: `webhook-lab-${stamp}.jsonl`, contentType: 'application/x-ndjson', chunks: jsonLines(store, ids) }
      : { filename: `webhook-lab-${stamp}.har`, contentType: 'application/json', chunks: harText(store, ids) };
  }
}

async function* jsonLines(store: Store, ids: number[]): AsyncGenerator<string> {
  const plans = trackingPlansOf(store);
  for (let i = 0; i < ids.length; i += PAGE) {
    if (i > 0) await nextTurn();
    let text = '';
    const page = ids.slice(i, i + PAGE);
    // Each line is what getMessage answers; the per-URL outcomes of the page in one query. An Actions
    // batch's whole body is on its first call's line only (each of up to 4,000 members repeating a
    // 30 MB body passed the longest string V8 makes); the other members' lines have the detail's cut form.
    const urls = new Map(store.calls.summaries(page).map((s) => [s.id, s.urls]));
    for (const id of page) {
      const call = store.calls.get(id);
      if (!call) continue;
      // What its source's tracking plan found when it arrived, as the detail has it (issue 24).
      const { violations, planCheck } = plans.detailOf(id, call.status);
      const callUrls = urls.get(id) ?? [];
      const deliveries = withAnsweredAttempts(store, store.deliveries.forCall(id, { pageBatches: 'unlessFirst' }));
      text += `${JSON.stringify({ call, urls: callUrls, deliveries, violations, planCheck, forwarding: forwardingOf(store, call, deliveries.length, callUrls) })}\n`;
    }
    if (text) yield text;
  }
}

/** HAR viewers expect entries oldest first; retries of older calls interleave with newer calls. */
async function* harText(store: Store, callIds: number[]): AsyncGenerator<string> {
  yield harHead(VERSION);
  // The order first: every attempt's start time and id (two numbers each), read in chunks of calls.
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
  if (status !== undefined && !(DELIVERY_FILTERS as readonly string[]).includes(status)) {
    throw new ValidationError([{ path: 'status', message: `expected one of ${DELIVERY_FILTERS.join(', ')}` }]);
  }
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
