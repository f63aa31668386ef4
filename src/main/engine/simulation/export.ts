import { DELIVERY_FILTERS, type OpParsed } from '../../../shared/api.contract';
import type { ExportFile } from '../../../shared/simulation.contract';
import { ValidationError } from '../../../shared/validation-error';
import { codedError } from '../errors';
import { ByteGate } from '../collector/byte-gate';
import type { CallFilter } from '../store/calls.repo';
import { harText } from './export-har-text';
import { jsonLines } from './export-jsonl';
import { ExportCalls, Slices, type ExportProgress } from './export-slices';
import type { Feature, SimulationDeps } from './simulation-deps';

export type { ExportProgress } from './export-slices';

type ExportInput = OpParsed<'exportDeliveries'>;

/** An export as it is written: the file's name and type, then its text a piece at a time. */
export interface ExportStream {
  filename: string;
  contentType: string;
  /**
   * Pulled by its reader: the next piece is made only when the last was taken, in slices of the event
   * loop (export-slices.ts). Returning early (a reader that went away) ends the work at once.
   */
  chunks: AsyncIterable<string>;
  /** How far it got (the engine's streams have it; a stand-in may not). */
  progress?: Readonly<ExportProgress>;
}

/**
 * Export of the inspector's history (issue 5): JSON Lines, one line per call in the shape of
 * `GET /api/messages/:id` (the call as received and normalized, its delivery and every attempt),
 * or HAR 1.2 with one entry per attempt. Filters are those of listMessages; the newest `limit`
 * matching calls are exported, oldest first. Streamed (GET /api/export/file, the desktop's save):
 * never whole in memory, and never more than a slice of the event loop at a time (issue 38).
 */
export class Exporter implements Feature<'exportDeliveries'> {
  #stopped = false;
  /** One-answer exports built at once: each holds up to 16 MB (and its JSON), so more wait their turn. */
  readonly #answers = new ByteGate(MAX_EXPORT_ANSWERS_AT_ONCE);

  constructor(private readonly deps: SimulationDeps) {}

  handlers() {
    return { exportDeliveries: (input: ExportInput) => this.export(input) };
  }

  /**
   * The whole file as one string: the API operation (GET /api/export). Bounded (issue 38 item 4: built
   * whole, 200,000 calls took the engine to 1.7 GB): past MAX_EXPORT_ANSWER_CHARS it stops reading and
   * answers 413, pointing at the streamed route, which has no bound.
   */
  async export(input: ExportInput): Promise<ExportFile> {
    const stream = this.open(input);
    // A count of exports, not bytes: each takes 1 of the gate's MAX_EXPORT_ANSWERS_AT_ONCE.
    await this.#answers.acquire(1);
    try {
      const parts: string[] = [];
      let bytes = 0;
      for await (const chunk of stream.chunks) {
        bytes += Buffer.byteLength(chunk);
        // Leaving the loop returns the generator: the export's work ends here.
        if (bytes > MAX_EXPORT_ANSWER_BYTES) throw tooLargeForOneAnswer();
        parts.push(chunk);
      }
      return { filename: stream.filename, contentType: stream.contentType, content: parts.join('') };
    } finally {
      this.#answers.release(1);
    }
  }

  /**
   * A bad filter throws here, before anything is sent. Which calls go in is fixed now: those stored at
   * this moment (export-slices.ts, ExportCalls: the snapshot rule); what is read of them, as the text
   * is pulled.
   */
  open(input: ExportInput): ExportStream {
    const { store } = this.deps;
    const calls = new ExportCalls(store, toFilter(input), input.limit);
    const progress: ExportProgress = { written: 0, slices: 0, longestSliceMs: 0, mostSliceCpuMs: 0, done: false, closed: false };
    const slices = new Slices(progress, () => this.#stopped);
    const stamp = new Date(this.deps.now()).toISOString().replace(/[:.]/g, '-');
    const text = input.format === 'jsonl' ? jsonLines(this.deps.details, calls, slices) : harText(store, calls, slices);
    const chunks = tracked(text, slices);
    return input.format === 'jsonl'
      ? { filename: `webhook-lab-${stamp}.jsonl`, contentType: 'application/x-ndjson', chunks, progress }
      : { filename: `webhook-lab-${stamp}.har`, contentType: 'application/json', chunks, progress };
  }

  /** Exports still being read end at their next slice, failing (the database closes next). */
  stop(): void {
    this.#stopped = true;
  }
}

/** The most file GET /api/export puts in its one JSON answer (16 MiB of UTF-8); GET /api/export/file streams any size. */
export const MAX_EXPORT_ANSWER_BYTES = 16 * 1024 * 1024;
/** One-answer exports built at once; the next waits (eight at once took a review's engine to 628 MB). */
const MAX_EXPORT_ANSWERS_AT_ONCE = 2;

const tooLargeForOneAnswer = () =>
  codedError(
    'too_large',
    `the export is over ${MAX_EXPORT_ANSWER_BYTES / 1024 / 1024} MB, too large for one JSON answer: GET /api/export/file with the same query streams it as a file (or give a smaller "limit" or narrower filters)`,
  );

/** The text with its progress kept up to date. */
async function* tracked(text: AsyncGenerator<string>, slices: Slices): AsyncGenerator<string> {
  try {
    yield* text;
    slices.end();
    slices.progress.done = true;
  } finally {
    slices.progress.closed = true;
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
    urlState: input.urlState,
    userId: input.userId || undefined,
    q: input.q || undefined,
    body: input.body,
  };
}
