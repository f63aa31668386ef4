import { createHash } from 'node:crypto';
import type { TrackingPlanRule } from '../../../shared/tracking-plan.schema';
import type { HeavyRules } from './check';
import type { CheckPool, CompileOutcome } from './check-pool';

// A plan is compiled in a check worker before anything of it is compiled on the event loop (issue
// 38): at a save, a config import, the start's warm-up. The worker refuses what does not compile (with
// a budget of 5 s a rule: a schema Ajv would take 12 s over is refused after 5, not after 12) and
// times each rule; a rule estimated (or measured) slow to compile is never compiled on the loop, its
// calls are checked in the workers. What the workers found is kept here for the service (service.ts).

/**
 * A rule whose compile is estimated over this (work-bounds.ts compileUs) stays off the loop; so does
 * one a worker measured over MEASURED_COMPILE_MS (a wall-clock figure: a busy machine stretches it,
 * so only as a backstop to the estimate).
 */
export const MAIN_COMPILE_MS = 10;
const MEASURED_COMPILE_MS = 100;
/** Rules remembered as heavy, at most (a later save finds them again). */
const HEAVY_KEPT = 2_000;

export const rulesHash = (rules: TrackingPlanRule[]) => createHash('sha1').update(JSON.stringify(rules)).digest('hex');

export class PlanGates {
  /** Heavy rules by content (their JSON): their estimated cost. */
  private readonly heavy = new Map<string, number[]>();
  /** The version (updatedAt) of each stored plan a worker compiled. */
  private readonly gatedAt = new Map<string, number>();
  /** The rules (JSON) a worker just compiled for a save: the save does not compile them on the loop. */
  private prepared: string | null = null;
  /** A config's plans compiled before its import, by their rules' JSON. */
  private configOutcomes = new Map<string, CompileOutcome>();

  constructor(private readonly pool: () => CheckPool) {}

  readonly heavyRule: HeavyRules = (content) => this.heavy.get(content);

  /** Compiles in a worker and notes the heavy rules. */
  async compile(key: string, id: string, name: string, rules: TrackingPlanRule[]): Promise<CompileOutcome> {
    const outcome = await this.pool().compile({ key, id, name, rules });
    if (outcome.ok) {
      outcome.rules.forEach((t, i) => {
        if (t.compileUs > MAIN_COMPILE_MS * 1000 || t.compileMs > MEASURED_COMPILE_MS) this.heavy.set(JSON.stringify(rules[i]), t.costUs);
      });
      while (this.heavy.size > HEAVY_KEPT) this.heavy.delete(this.heavy.keys().next().value!);
    }
    return outcome;
  }

  isGated(id: string, updatedAt: number | undefined): boolean {
    return updatedAt !== undefined && this.gatedAt.get(id) === updatedAt;
  }

  markGated(id: string, updatedAt: number): void {
    this.gatedAt.set(id, updatedAt);
  }

  /** Rules about to be saved, compiled in a worker first. */
  async prepare(name: string, rules: TrackingPlanRule[]): Promise<CompileOutcome> {
    const outcome = await this.compile(`save:${rulesHash(rules)}`, 'save', name, rules);
    this.prepared = outcome.ok ? JSON.stringify(rules) : null;
    return outcome;
  }

  /** Whether these rules are the ones just prepared (once). */
  takePrepared(rules: TrackingPlanRule[]): boolean {
    const hit = this.prepared !== null && this.prepared === JSON.stringify(rules);
    this.prepared = null;
    return hit;
  }

  async prepareConfig(name: string, rules: TrackingPlanRule[]): Promise<void> {
    const json = JSON.stringify(rules);
    if (!this.configOutcomes.has(json)) this.configOutcomes.set(json, await this.compile(`config:${rulesHash(rules)}`, 'check', name, rules));
  }

  /** What a worker found of a config's plan before its import, or undefined (not compiled there: the loop compiles it). */
  configOutcome(rules: TrackingPlanRule[]): CompileOutcome | undefined {
    return this.configOutcomes.get(JSON.stringify(rules));
  }

  forgetConfig(): void {
    this.configOutcomes = new Map();
  }
}
