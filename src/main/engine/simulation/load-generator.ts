import { randomBytes } from 'node:crypto';
import type { OpParsed } from '../../../shared/api.contract';
import type { LoadRun, LoadSample } from '../../../shared/simulation.contract';
import { validateMessage } from '../../../shared/message-rules';
import { ValidationError } from '../../../shared/validation-error';
import type { DeliveryState } from '../../../shared/types';
import { Analytics } from '../client/analytics';
import { QueueFullError } from '../client/errors';
import { conflict, HttpError } from '../errors';
import type { Feature, SimulationDeps } from './simulation-deps';
import { formatTimestamp } from '../../../shared/timestamp';

type LoadInput = OpParsed<'startLoad'>;
type Message = Record<string, unknown>;

const TICK_MS = 50;
const SAMPLE_MS = 1000;
/** Samples kept per run; older ones are thinned (every other dropped) so a long run still charts whole. */
const MAX_SAMPLES = 600;
/** After the last call is sent, keep sampling while this run's deliveries are still pending, at most this long. */
const SETTLE_MS = 30_000;
/** Calls queued in the run's client beyond which pacing waits for the collector instead of piling up. */
const MAX_QUEUED = 50_000;
/** stopLoad waits this long for queued calls to be flushed before answering. */
const STOP_FLUSH_MS = 3000;
const FINAL: ReadonlySet<DeliveryState> = new Set(['delivered', 'failed', 'expired', 'dropped']);

/** Builds call i of a run from its template: `{{userId}}` and `{{i}}` are replaced in every string value. */
export function compileTemplate(template: LoadInput['template'], runId: string): (i: number, userId: string) => Message {
  const { type: _type, ...fields } = template;
  const json = JSON.stringify(fields);
  const dynamic = json.includes('{{userId}}') || json.includes('{{i}}');
  const needsUser = fields.userId === undefined && fields.anonymousId === undefined;
  return (i, userId) => {
    // userId is `user-<n>` and i a number: neither needs escaping inside JSON strings.
    const msg: Message = dynamic ? JSON.parse(json.replaceAll('{{userId}}', userId).replaceAll('{{i}}', String(i))) : { ...fields };
    if (needsUser) msg.userId = userId;
    msg.messageId = `load-${runId}-${i}`;
    return msg;
  };
}

/** Nearest-rank percentile of an ascending list. */
export function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

interface ActiveRun {
  view: LoadRun;
  input: LoadInput;
  client: Analytics;
  build: (i: number, userId: string) => Message;
  startMs: number;
  /** First calls.id this run can have: bounds every query to the run's rows. */
  firstCallId: number;
  /** Delivery rows below this call id were final at an earlier sample; their counts are cached. */
  cursor: number;
  settled: { delivered: number; failed: number };
  lastSampleMs: number;
  tick: NodeJS.Timeout | null;
  sampler: NodeJS.Timeout | null;
  closing: Promise<void> | null;
}

/**
 * The load generator (issue 5): offers `rate` calls/s through its own batching client, so the
 * whole path (client → collector → store → dispatcher → receiver) carries the load, and samples
 * outcomes and delivery latency from SQLite once a second.
 */
export class LoadGenerator implements Feature<'startLoad' | 'getLoad' | 'stopLoad'> {
  private run: ActiveRun | null = null;

  constructor(private readonly deps: SimulationDeps) {}

  handlers() {
    return {
      startLoad: (input: LoadInput) => this.start_(input),
      getLoad: () => (this.run ? this.snapshot(this.run) : null),
      stopLoad: () => this.stopRun(),
    };
  }

  /** Engine shutdown: end a running run and release its client. */
  async stop(): Promise<void> {
    if (this.run?.view.state === 'running') await this.stopRun();
    if (this.run) this.clearTimers(this.run);
  }

  private start_(input: LoadInput): LoadRun {
    if (this.run?.view.state === 'running') throw conflict(`a load run is already running (${this.run.view.id}); stop it first`);
    if (this.run) this.clearTimers(this.run);
    const writeKey = this.writeKey(input.sourceId);
    const id = randomBytes(4).toString('hex');
    const build = compileTemplate(input.template, id);
    const first = build(0, 'user-1');
    const violations = validateMessage(input.template.type, first);
    if (violations.length > 0) throw new ValidationError(violations.map((v) => ({ path: v.field ? `template.${v.field}` : 'template', message: v.message })));

    const byDuration = input.durationS !== undefined ? Math.max(1, Math.round(input.rate * input.durationS)) : Infinity;
    const target = Math.min(byDuration, input.total ?? Infinity);
    const now = this.deps.now();
    const nextId = this.deps.store.outcomes.nextCallId();
    // Latency matters more than request count here: small batches, sent every 50 ms at the latest.
    const client = new Analytics(writeKey, {
      endpoint: this.deps.collectorUrl(),
      flushAt: 100,
      flushAfter: 50,
      maxQueueSize: MAX_QUEUED + 10_000,
      maxRetries: 3,
      concurrency: 8,
      debug: false,
    });
    const run: ActiveRun = {
      view: { id, state: 'running', startedAt: formatTimestamp(now), endedAt: null, rate: input.rate, target, sent: 0, accepted: 0, errors: 0, lastError: null, samples: [] },
      input,
      client,
      build,
      startMs: now,
      firstCallId: nextId,
      cursor: nextId,
      settled: { delivered: 0, failed: 0 },
      lastSampleMs: now,
      tick: null,
      sampler: null,
      closing: null,
    };
    client.on('flush', (b) => {
      if (b.ok) run.view.accepted += b.count;
    });
    client.on('drop', (d) => {
      run.view.errors += d.count;
      run.view.lastError = d.reason;
    });
    client.on('error', (err) => {
      run.view.lastError = err.message;
    });
    this.run = run;
    run.tick = setInterval(() => this.tick(run), TICK_MS);
    run.sampler = setInterval(() => this.sample(run), SAMPLE_MS);
    run.tick.unref();
    run.sampler.unref();
    this.deps.log(`load: run ${id} started, ${input.rate}/s, ${target} calls`);
    this.tick(run);
    this.publish(run);
    return this.snapshot(run);
  }

  private writeKey(sourceId: string | undefined): string {
    const { sources, settings } = this.deps.store;
    if (sourceId) {
      const s = sources.get(sourceId);
      if (!s) throw new HttpError(404, `sourceId: no source ${sourceId}`);
      return s.writeKey;
    }
    // The app client's source, as the UI's Client screen set it; else the first source.
    const clientSource = settings.getExtra<{ sourceId?: string | null }>('client')?.sourceId;
    const s = (clientSource && sources.get(clientSource)) || sources.list()[0];
    if (!s) throw conflict('create a source first: the load generator sends with a source’s write key');
    return s.writeKey;
  }

  /** Sends the calls due by now, never ahead of the schedule and at most two ticks' worth at once. */
  private tick(run: ActiveRun): void {
    const v = run.view;
    if (v.state !== 'running' || run.closing) return;
    const elapsed = this.deps.now() - run.startMs;
    const due = Math.min(v.target, Math.floor((run.input.rate * elapsed) / 1000) + 1);
    const room = MAX_QUEUED - run.client.stats().queued;
    const n = Math.min(due - v.sent, Math.ceil((run.input.rate * TICK_MS * 2) / 1000), room);
    const users = run.input.users;
    try {
      for (let k = 0; k < n; k++) {
        const userId = `user-${1 + Math.floor(this.deps.random() * users)}`;
        run.client.enqueue(run.input.template.type, run.build(v.sent, userId));
        v.sent++;
      }
    } catch (err) {
      if (!(err instanceof QueueFullError)) return this.finishInBackground(run, 'error', (err as Error).message);
    }
    if (v.sent >= v.target) this.finishInBackground(run, 'done');
  }

  /** Flushes what is queued, then marks the run ended and samples until its deliveries settle. */
  /** A run ending from inside its own tick: nobody awaits it, and its failure is already the run's state. */
  private finishInBackground(run: ActiveRun, state: 'done' | 'error', error?: string): void {
    this.finish(run, state, error).catch(() => undefined);
  }

  private finish(run: ActiveRun, state: 'done' | 'stopped' | 'error', error?: string): Promise<void> {
    if (run.closing) return run.closing;
    if (run.tick) clearInterval(run.tick);
    run.tick = null;
    if (error) run.view.lastError = error;
    run.closing = run.client.close().then(() => {
      const v = run.view;
      v.state = state;
      v.endedAt = formatTimestamp(this.deps.now());
      this.deps.log(`load: run ${v.id} ${state}: ${v.sent} sent, ${v.accepted} accepted, ${v.errors} errors`);
      this.sample(run);
    });
    return run.closing;
  }

  private async stopRun(): Promise<LoadRun | null> {
    const run = this.run;
    if (!run) return null;
    if (run.view.state === 'running') {
      const closed = this.finish(run, 'stopped');
      await Promise.race([closed, new Promise((r) => setTimeout(r, STOP_FLUSH_MS).unref())]);
    }
    return this.snapshot(run);
  }

  private sample(run: ActiveRun): void {
    const v = run.view;
    const now = this.deps.now();
    let counts;
    try {
      counts = this.measure(run, now);
    } catch {
      return; // The database closed under us at shutdown.
    }
    const { unsettled, ...outcomes } = counts;
    const s: LoadSample = { t: Math.round((now - run.startMs) / 100) / 10, sent: v.sent, accepted: v.accepted, ...outcomes };
    v.samples.push(s);
    if (v.samples.length > MAX_SAMPLES) v.samples = v.samples.filter((_, i) => i % 2 === 1 || i === v.samples.length - 1);
    run.lastSampleMs = now;
    this.publish(run);
    // Sampling ends once the run ended and nothing of it is pending or in flight (or after SETTLE_MS).
    const ended = v.state !== 'running' && v.endedAt !== null;
    if (ended && (unsettled === 0 || now - Date.parse(v.endedAt!) > SETTLE_MS)) this.clearTimers(run);
  }

  /** Outcome counts of the run's deliveries and the latency of those delivered since the last sample. */
  private measure(run: ActiveRun, now: number) {
    const { outcomes } = this.deps.store;
    const prefix = `load-${run.view.id}-`;
    const rows = outcomes.statesFrom(run.cursor, prefix);
    const latencies = outcomes.latenciesFrom(run.cursor, prefix, run.lastSampleMs, now).sort((a, b) => a - b);
    let delivered = run.settled.delivered;
    let failed = run.settled.failed;
    let retrying = 0;
    let unsettled = 0;
    // Rows below the first unfinished one never change again: fold them into the cache.
    let frontier = true;
    for (const r of rows) {
      const final = FINAL.has(r.state);
      if (!final) frontier = false;
      if (r.state === 'delivered') delivered++;
      else if (final) failed++;
      else if (r.state === 'retrying') retrying++;
      else unsettled++;
      if (frontier) {
        if (r.state === 'delivered') run.settled.delivered++;
        else run.settled.failed++;
        run.cursor = r.id + 1;
      }
    }
    return { delivered, failed, retrying, unsettled, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) };
  }

  private publish(run: ActiveRun): void {
    this.deps.events.emit({ type: 'load.progress', run: this.snapshot(run) });
  }

  private snapshot(run: ActiveRun): LoadRun {
    return { ...run.view, samples: run.view.samples.slice() };
  }

  private clearTimers(run: ActiveRun): void {
    if (run.tick) clearInterval(run.tick);
    if (run.sampler) clearInterval(run.sampler);
    run.tick = run.sampler = null;
  }
}
