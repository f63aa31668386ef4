import type { Source } from '../../../shared/types';
import { mulberry32 } from '../seeded-random';
import { DEFAULT_FAULT_STATUS, faultOutcome, type CollectorFaults, type CollectorFaultCounts, type FaultMode } from '../../../shared/collector-faults';
import { formatTimestamp } from '../../../shared/timestamp';

/** What the collector does to one request instead of (status, hang, reset) or before (delay) handling it. */
export interface FaultDecision {
  mode: FaultMode;
  /** The status answered in mode "status". */
  status: number;
  retryAfterS?: number;
  delayMs?: number;
  /** How it is counted: "503", "delay", "hang", "reset". */
  outcome: string;
}

/** The seed of a source that gives none: FNV-1a of its id, so the sequence is the same at every start. */
export function derivedSeed(sourceId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < sourceId.length; i++) h = Math.imul(h ^ sourceId.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

interface SourceState {
  /** The settings this sequence belongs to: a new settings object starts the sequence over. */
  config: CollectorFaults;
  next: () => number;
  decision: FaultDecision;
}

/**
 * Per source: the seeded sequence that picks which requests get a fault, and how many got which,
 * counted in memory since start. Only consulted for a source whose collectorFaults is set, so a
 * collector without faults pays one property read per request and nothing here.
 */
export class FaultInjector {
  private readonly states = new Map<string, SourceState>();
  private readonly counts = new Map<string, Record<string, number>>();

  constructor(private readonly startedAt: number) {}

  /**
   * One draw of the source's sequence (the sequence advances once per request sent with its key);
   * the fault for this request, or null when it is handled normally.
   */
  draw(source: Source): FaultDecision | null {
    const config = source.collectorFaults;
    if (!config) return null;
    let state = this.states.get(source.id);
    if (!state || state.config !== config) {
      state = { config, next: mulberry32(config.seed ?? derivedSeed(source.id)), decision: decisionOf(config) };
      this.states.set(source.id, state);
    }
    // rate 0 never (a draw is ≥ 0), rate 1 always (a draw is < 1).
    if (!(state.next() < config.rate)) return null;
    const counts = this.counts.get(source.id) ?? {};
    counts[state.decision.outcome] = (counts[state.decision.outcome] ?? 0) + 1;
    this.counts.set(source.id, counts);
    return state.decision;
  }

  /** A deleted source's sequence and counts go with it. */
  forget(sourceId: string): void {
    this.states.delete(sourceId);
    this.counts.delete(sourceId);
  }

  snapshot(): CollectorFaultCounts {
    const sources: CollectorFaultCounts['sources'] = {};
    for (const [id, c] of this.counts) sources[id] = { ...c };
    return { since: formatTimestamp(this.startedAt), sources };
  }
}

function decisionOf(c: CollectorFaults): FaultDecision {
  return { mode: c.mode, status: c.status ?? DEFAULT_FAULT_STATUS, retryAfterS: c.retryAfterS, delayMs: c.delayMs, outcome: faultOutcome(c) };
}
