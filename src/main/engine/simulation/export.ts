import { DELIVERY_FILTERS, type OpParsed } from '../../../shared/api.contract';
import type { ExportFile } from '../../../shared/simulation.contract';
import type { CallDetail } from '../../../shared/types';
import { ValidationError } from '../../../shared/validation-error';
import type { CallFilter } from '../store/calls.repo';
import { VERSION } from '../version';
import { harDocument, harEntry, type HarEntry } from './export-har';
import type { Feature, SimulationDeps } from './simulation-deps';

type ExportInput = OpParsed<'exportDeliveries'>;

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

  export(input: ExportInput): ExportFile {
    const details = this.details(input);
    const stamp = new Date(this.deps.now()).toISOString().replace(/[:.]/g, '-');
    if (input.format === 'jsonl') {
      return {
        filename: `webhook-lab-${stamp}.jsonl`,
        contentType: 'application/x-ndjson',
        content: details.map((d) => `${JSON.stringify(d)}\n`).join(''),
      };
    }
    const entries: HarEntry[] = [];
    for (const d of details) for (const delivery of d.deliveries) for (const a of delivery.attempts) entries.push(harEntry(d, a));
    // HAR viewers expect entries oldest first; retries of older calls interleave with newer calls.
    entries.sort((x, y) => Date.parse(x.startedDateTime) - Date.parse(y.startedDateTime) || x._webhookLab.attemptId - y._webhookLab.attemptId);
    return { filename: `webhook-lab-${stamp}.har`, contentType: 'application/json', content: harDocument(VERSION, entries) };
  }

  private details(input: ExportInput): CallDetail[] {
    const { store } = this.deps;
    const filter = toFilter(input);
    // One query (the repo's own filter, so the export matches the inspector's list), newest first.
    const ids = store.calls.list({ ...filter, limit: input.limit }).items.map((c) => c.id);
    ids.reverse();
    const out: CallDetail[] = [];
    for (const id of ids) {
      const call = store.calls.get(id);
      if (call) out.push({ call, deliveries: store.deliveries.forCall(id) });
    }
    return out;
  }
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
    userId: input.userId || undefined,
    q: input.q || undefined,
  };
}
