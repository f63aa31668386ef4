import { randomUUID } from 'node:crypto';
import type { ProbeReport } from '../../../shared/probe.contract';
import type { ActionsMapping, Source } from '../../../shared/types';
import { webhookMappings } from '../../../shared/actions/mode';
import { ValidationError } from '../../../shared/validation-error';
import { HttpError, notFound } from '../errors';
import type { ProbeSenderDeps } from './probe-sender';
import { newReport, runProbe, type ProbeParsed } from './probe-runner';

/** The source every probe's calls are stored under (the inspector filters by it). */
export { PROBE_SOURCE_NAME } from '../../../shared/probe.contract';
import { PROBE_SOURCE_NAME } from '../../../shared/probe.contract';
/** Reports kept in memory for getProbe; older ones are forgotten (their calls stay in the inspector). */
const KEEP_REPORTS = 20;

/**
 * startProbe and getProbe (shared/probe.contract.ts). A probe runs in the background; its report
 * is updated in place and pushed as `probe.changed` after each step.
 */
export class Probes {
  private readonly reports = new Map<string, ProbeReport>();
  private readonly running = new Set<Promise<void>>();

  constructor(private readonly deps: ProbeSenderDeps) {}

  handlers() {
    return {
      startProbe: (input: ProbeParsed): ProbeReport => this.start(input).report,
      getProbe: (input: { id: string }): ProbeReport => {
        const r = this.reports.get(input.id);
        if (!r) throw notFound(`probe ${input.id}`);
        return structuredClone(r);
      },
    };
  }

  /** Starts a probe; `done` settles when its report is final. */
  start(input: ProbeParsed): { report: ProbeReport; done: Promise<void> } {
    // Every request is recorded: while storage fails (a full disk) none could be, as the collector refuses calls then.
    const storage = this.deps.store.health.get();
    if (!storage.ok) throw new HttpError(503, `the lab cannot store the probe's requests now: ${storage.message ?? 'storage is failing'}; try again once it can`);
    const mapping = input.mode === 'actions' ? this.mappingOf(input) : null;
    const source = this.probeSource();
    const report = newReport(randomUUID(), input, source.id, this.deps.now());
    this.reports.set(report.id, report);
    for (const id of this.reports.keys()) {
      if (this.reports.size <= KEEP_REPORTS) break;
      if (this.reports.get(id)!.state === 'done') this.reports.delete(id);
    }
    const changed = () => this.deps.events.emit({ type: 'probe.changed', probe: structuredClone(report) });
    const done = runProbe(this.deps, source, input, report, changed, mapping).finally(() => this.running.delete(done));
    this.running.add(done);
    return { report: structuredClone(report), done };
  }

  /** Actions mode: the mapping named, of the source named (by name or id); refused with the names there are. */
  private mappingOf(input: ProbeParsed): ActionsMapping {
    const { store } = this.deps;
    const name = input.source ?? '';
    const source = store.sources.byName(name) ?? store.sources.get(name);
    if (!source) {
      const names = store.sources.list().map((s) => s.name).filter((n) => n !== PROBE_SOURCE_NAME);
      throw new ValidationError([{ path: 'source', message: `${name ? `no source named "${name}"` : 'required in actions mode'} (sources: ${names.join(', ') || 'none'})` }]);
    }
    const mappings = webhookMappings(source.webhooks);
    const mapping = mappings.find((m) => m.name === input.mapping);
    if (!mapping) {
      const list = mappings.map((m) => m.name).join(', ') || 'none';
      throw new ValidationError([{ path: 'mapping', message: `${input.mapping ? `source "${source.name}" has no mapping named "${input.mapping}"` : 'required in actions mode'} (mappings: ${list})` }]);
    }
    return mapping;
  }

  /** Waits for the probes running (each ends within a minute of the lanes closing: lab stop refuses their waits first). */
  async stop(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  /** The "probe" source, made once: Webhooks off, so nothing but the probe ever sends its calls. */
  private probeSource(): Source {
    const { store, events, now } = this.deps;
    const existing = store.sources.byName(PROBE_SOURCE_NAME);
    if (existing) return existing;
    const s = store.sources.create({ name: PROBE_SOURCE_NAME, webhooks: { enabled: false, urls: [] } }, now());
    events.emit({ type: 'sources.changed' });
    return s;
  }
}
