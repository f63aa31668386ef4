import { randomUUID } from 'node:crypto';
import type { Store } from '../store/store';
import type { Envelope } from '../../../shared/normalize';
import type { ArrivingCall } from '../store/arrivals';
import type { CallDetail } from '../../../shared/types';
import type { Config } from '../../../shared/config.schema';
import { formatTimestamp } from '../../../shared/timestamp';
import { ruleId, type PlanVerdict, type RuleStats, type TrackingPlan, type TrackingPlanConnection, type TrackingPlanInput, type TrackingPlanRule } from '../../../shared/tracking-plan.schema';
import { conflict, HttpError, notFound } from '../errors';
import { UNPLANNED_EVENTS_SHOWN, type OffPlanStats } from '../../../shared/tracking-plans.contract';
import type { FieldError } from '../../../shared/validation-error';
import { checkCall, compilePlan, PlanCompiler, RuleCompileError, withEnvelope, type CompiledPlan, type HeavyRules } from './check';
import { TrackingPlansRepo, type StoredConnection, type StoredPlan } from './plans.repo';
import { CheckPool, PlanNotCompiled } from './check-pool';
import { PlanChecks, type PlanToCheck } from './plan-checks';
import { PlanGates, rulesHash } from './plan-gates';
import { backgroundSlices } from '../slice-meter';

// Tracking plans in the engine (issue 24): the plans and the sources' connections, mirrored in memory
// with each connected plan compiled once (and again only when it changes), so that the collector's
// question "does this source have a plan?" is one Map lookup, and a source without one costs nothing
// more. The engine makes one (engine.ts) and hands it to the collector, the API, the config import,
// the read model and the dispatcher's replays, so all of them share the mirror.
// The plans stored when the lab starts are compiled in slices after it (warmUp): a 1,000-rule plan
// took ~0.6 s of the start before the first answer. Since issue 38 nothing of a plan is compiled on
// the event loop before a check worker compiled it (plan-gates.ts), and the collector's and the API's
// checks run on the loop only when known cheap, else in the workers with a budget (plan-checks.ts);
// until a plan is compiled on the loop, its calls are checked in the workers. The synchronous
// forSource/check pair still compiles on demand, for code that wants a plan at once (tests).

/** How long one slice of the start's compile may hold the event loop. */
const WARM_UP_SLICE_MS = 10;

export interface SourceChecker {
  plan: CompiledPlan;
  settings: StoredConnection;
}

export class TrackingPlans {
  readonly repo: TrackingPlansRepo;
  private plans = new Map<string, StoredPlan>();
  private compiled = new Map<string, CompiledPlan>();
  /** The updatedAt each plan in `compiled` or `unusable` was compiled from. */
  private readonly compiledAt = new Map<string, number>();
  private bySource = new Map<string, SourceChecker>();
  /** Connected plans that do not compile, by id: why. */
  private readonly unusable = new Map<string, string>();
  /** Every stored connection by source, a plan that does not compile included (shown and exported, not checked). */
  private connections = new Map<string, StoredConnection>();
  /** Plans compiled to check a config before its import, whose rules reload() then takes (each rule compiled once). */
  private checkedForImport: CompiledPlan[] = [];
  /** What the last reload set aside (plans changed since, the config check's): their unchanged rules are taken, not compiled again. */
  private reusable: CompiledPlan[] = [];
  /** Compiles under way in warmUp's slices, with the updatedAt of the plan each began from. */
  private readonly pending = new Map<string, { compiler: PlanCompiler; updatedAt: number }>();
  /** Where a plan found not to compile is said (the engine's log), and the plans already said. */
  private warn: ((line: string) => void) | null = null;
  private readonly reported = new Set<string>();
  private warming: Promise<void> | null = null;
  private stopped = false;
  private poolInstance: CheckPool | undefined;
  /** Where the workers' compiles and demoted rules are said (the engine's log). */
  private info: ((line: string) => void) | null = null;
  private readonly gates = new PlanGates(() => this.pool());
  private readonly heavy: HeavyRules = this.gates.heavyRule;
  private readonly checks = new PlanChecks(
    () => this.pool(),
    (id, updatedAt, err) => this.notCompiledInWorker(id, updatedAt, err),
    (line) => this.info?.(line),
  );

  constructor(private readonly store: Store) {
    this.repo = store.featureRepo((db) => new TrackingPlansRepo(db));
    this.readPlans();
    this.connectSources();
  }

  /**
   * Compiles the connected plans not compiled yet, a slice at a time (again after each reload or
   * save), and says through `warn` each stored plan found not to compile, once.
   */
  startWarmUp(warn: (line: string) => void, info?: (line: string) => void): void {
    this.warn = warn;
    if (info) this.info = info;
    for (const id of this.unusable.keys()) this.report(id);
    this.kick();
  }

  /** Resolves when no connected plan is left to compile (tests; the engine does not wait for it). */
  whenWarm(): Promise<void> {
    return this.warming ?? Promise.resolve();
  }

  /**
   * A stored plan's validators (compiled once, as for its sources), or a 409 saying why there are none:
   * its rules do not compile, or its row could not be read (it answered 400 naming a rule, or checked
   * a call against no rules at all).
   */
  compiledOrRefuse(id: string): CompiledPlan {
    const p = this.plans.get(id);
    if (!p) throw notFound(`tracking plan ${id}`);
    const why = this.unusable.get(id) ?? this.compileProblem(id);
    if (why !== null) throw conflict(`tracking plan "${p.name}" does not compile (${why}): save it again with rules that compile`);
    return this.compiled.get(id)!;
  }

  /** Whether a plan's validators are ready (compiled at a save, by warmUp, or for a call that needed them). */
  isCompiled(id: string): boolean {
    return this.compiled.has(id);
  }

  stopWarmUp(): void {
    this.stopped = true;
  }

  /** The check workers, started when first needed (a lab without plans starts none). */
  pool(): CheckPool {
    return (this.poolInstance ??= new CheckPool({ log: (line) => this.info?.(line) }));
  }

  /** Where the check workers' compiles and rules moved off the loop are said (the engine's log). */
  logTo(info: (line: string) => void): void {
    this.info = info;
  }

  /** Checks in these workers from now on (tests: a pool whose worker crashes on cue). */
  useCheckPool(pool: CheckPool): void {
    this.poolInstance = pool;
  }

  /** Ends the check workers (the engine's stop, after the collector finished its requests). */
  async close(): Promise<void> {
    this.stopped = true;
    await this.poolInstance?.close();
  }

  private kick(): void {
    if (!this.warn || this.stopped) return;
    this.warming ??= this.warmUp()
      // Stopped meanwhile (the check workers ended with the engine): nothing to say.
      .catch((err: unknown) => (this.stopped ? undefined : this.warn?.(`tracking plans: ${(err as Error)?.stack ?? String(err)}`)))
      .finally(() => (this.warming = null));
  }

  private async warmUp(): Promise<void> {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      if (this.stopped) return;
      const c = this.nextToWarm();
      if (!c) return;
      // A worker compiles it first: what does not compile is set aside, what is slow stays off the loop.
      if (!this.gates.isGated(c.planId, this.plans.get(c.planId)?.updatedAt)) await this.gatePlan(c.planId);
      else if (backgroundSlices.time('plan compile', () => this.compileSlice(c.planId))) this.checkerFor(c);
    }
  }

  /** A connection without its checker whose plan may still compile. */
  private nextToWarm(): StoredConnection | undefined {
    for (const c of this.connections.values()) if (!this.bySource.has(c.sourceId) && !this.unusable.has(c.planId) && this.plans.has(c.planId)) return c;
    return undefined;
  }

  /** One slice of a plan's compile; true when nothing is left to do for it (compiled, refused or gone). */
  private compileSlice(id: string): boolean {
    const p = this.plans.get(id);
    if (!p || this.compiled.has(id) || this.unusable.has(id)) return true;
    let pend = this.pending.get(id);
    if (!pend || pend.updatedAt !== p.updatedAt) {
      pend = { compiler: new PlanCompiler(p.id, p.name, p.rules, this.reuse(), this.heavy), updatedAt: p.updatedAt };
      this.pending.set(id, pend);
    }
    const until = performance.now() + WARM_UP_SLICE_MS;
    try {
      while (pend.compiler.step()) if (performance.now() > until) return false;
    } catch (err) {
      if (!(err instanceof RuleCompileError)) throw err;
      this.pending.delete(id);
      this.markUnusable(id, p.updatedAt, err.message);
      return true;
    }
    this.pending.delete(id);
    this.compiled.set(id, pend.compiler.plan);
    this.compiledAt.set(id, pend.updatedAt);
    return true;
  }

  /** Compiled rules a compile may take: compiled plans, what the last reload set aside, and what the slices compiled so far. */
  private reuse(): CompiledPlan[] {
    return [...this.compiled.values(), ...this.reusable, ...[...this.pending.values()].map((p) => p.compiler.plan)];
  }

  /** Reads plans and connections from SQLite again (after a config import, or one rolled back). */
  reload(): void {
    this.readPlans();
    this.reusable = [...this.checkedForImport];
    this.checkedForImport = [];
    this.gates.forgetConfig();
    for (const id of new Set([...this.compiled.keys(), ...this.unusable.keys()])) {
      const p = this.plans.get(id);
      if (p && p.updatedAt === this.compiledAt.get(id)) continue;
      const was = this.compiled.get(id);
      if (was) this.reusable.push(was);
      this.compiled.delete(id);
      this.unusable.delete(id);
      this.reported.delete(id);
    }
    this.connectSources();
  }

  /** The stored plans; one whose rows could not be read (edited by hand) is set aside as one that does not compile. */
  private readPlans(): void {
    this.plans = new Map(this.repo.plans().map((p) => [p.id, p]));
    for (const p of this.plans.values()) if (p.damaged !== undefined) this.markUnusable(p.id, p.updatedAt, p.damaged);
  }

  /**
   * The sources' connections, read again; each source's checker is made when first needed (a call
   * of it, or warmUp), its plan compiled then if it is not yet. A stored plan that does not compile
   * (one an older lab let in) is set aside with its reason rather than failing the start: its sources'
   * calls are not checked until it is saved again (said through `warn`).
   */
  private connectSources(): void {
    this.bySource = new Map();
    this.connections = new Map();
    for (const c of this.repo.connections()) this.connections.set(c.sourceId, c);
    this.kick();
  }

  /** The source's checker, its plan compiled now if it is not yet; undefined when the plan does not compile. */
  private checkerFor(c: StoredConnection): SourceChecker | undefined {
    // A plan found not to compile is tried once, not again for each further source connected to it.
    if (this.unusable.has(c.planId) || this.compileProblem(c.planId) !== null) return undefined;
    const plan = this.compiled.get(c.planId);
    if (!plan) return undefined;
    const checker = { plan, settings: c };
    this.bySource.set(c.sourceId, checker);
    return checker;
  }

  private markUnusable(id: string, updatedAt: number, why: string): void {
    this.unusable.set(id, why);
    this.compiledAt.set(id, updatedAt);
    this.report(id);
  }

  private report(id: string): void {
    if (!this.warn || this.reported.has(id)) return;
    this.reported.add(id);
    this.warn(`tracking plan "${this.plans.get(id)?.name ?? id}": ${this.unusable.get(id)}; its sources' calls are not checked until it is saved again with rules that compile`);
  }

  /** Why a stored plan does not compile, or null when it does (compiled then, in `compiled`). */
  private compileProblem(id: string): string | null {
    try {
      this.compiledPlan(id);
      return null;
    } catch (err) {
      if (!(err instanceof RuleCompileError)) throw err;
      this.markUnusable(id, this.plans.get(id)!.updatedAt, err.message);
      return err.message;
    }
  }

  /**
   * Connected sources whose plan does not compile (of one source, or all): their calls are not checked.
   * Plans the start's slices have not reached are compiled now, so the answer is whole (a pipeline's
   * `check` right after the start passed such a source).
   */
  uncheckedSources(sourceId?: string): { sourceId: string; plan: string; problem: string }[] {
    for (const c of this.connections.values()) {
      if (sourceId !== undefined && c.sourceId !== sourceId) continue;
      if (!this.bySource.has(c.sourceId)) this.checkerFor(c);
    }
    return this.listUnchecked(sourceId);
  }

  /** uncheckedSources without compiling on the event loop: plans not compiled yet are compiled in a worker. */
  async uncheckedSourcesNow(sourceId?: string): Promise<{ sourceId: string; plan: string; problem: string }[]> {
    for (const c of [...this.connections.values()]) {
      if (sourceId !== undefined && c.sourceId !== sourceId) continue;
      await this.ensureGated(c.planId);
    }
    return this.listUnchecked(sourceId);
  }

  private listUnchecked(sourceId?: string): { sourceId: string; plan: string; problem: string }[] {
    const out: { sourceId: string; plan: string; problem: string }[] = [];
    for (const c of this.connections.values()) {
      const problem = this.unusable.get(c.planId);
      if (problem === undefined || (sourceId !== undefined && c.sourceId !== sourceId)) continue;
      out.push({ sourceId: c.sourceId, plan: this.plans.get(c.planId)?.name ?? c.planId, problem });
    }
    return out;
  }

  private compiledPlan(id: string): CompiledPlan | undefined {
    const hit = this.compiled.get(id);
    if (hit) return hit;
    const p = this.plans.get(id);
    if (!p) return undefined;
    // A compile warmUp's slices began is finished rather than begun again.
    const pend = this.pending.get(id);
    this.pending.delete(id);
    let c: CompiledPlan;
    if (pend?.updatedAt === p.updatedAt) {
      while (pend.compiler.step());
      c = pend.compiler.plan;
    } else c = compilePlan(p.id, p.name, p.rules, this.reuse(), this.heavy);
    this.compiled.set(id, c);
    this.compiledAt.set(id, p.updatedAt);
    return c;
  }

  /** The plan a source's calls are checked against; undefined for most sources (no plan). */
  forSource(sourceId: string): SourceChecker | undefined {
    if (this.connections.size === 0) return undefined;
    const hit = this.bySource.get(sourceId);
    if (hit) return hit;
    // Connected, its plan not compiled yet (the start's slices have not reached it): compiled now.
    const c = this.connections.get(sourceId);
    return c && !this.unusable.has(c.planId) ? this.checkerFor(c) : undefined;
  }

  /**
   * The plan a source's arriving calls are checked against, with its loop-compiled validators when it
   * has them; nothing is compiled here (the collector's path). Undefined for most sources (no plan) and
   * for a plan that does not compile (its calls go unchecked, as the API and `check` say).
   */
  planFor(sourceId: string): PlanToCheck | undefined {
    if (this.connections.size === 0) return undefined;
    const c = this.connections.get(sourceId);
    if (!c || this.unusable.has(c.planId)) return undefined;
    return this.toCheck(c.planId, c);
  }

  private toCheck(planId: string, settings: PlanToCheck['settings']): PlanToCheck | undefined {
    const p = this.plans.get(planId);
    if (!p) return undefined;
    const compiled = this.compiledAt.get(p.id) === p.updatedAt ? this.compiled.get(p.id) : undefined;
    return { id: p.id, name: p.name, rules: p.rules, updatedAt: p.updatedAt, settings, compiled };
  }

  /** Checks a request's calls that were read (not dropped) and sets their verdicts: on the loop when cheap, else in the workers. */
  async checkArriving(plan: PlanToCheck, calls: ArrivingCall[], envelope: Envelope, request: { body: Uint8Array; route: string }): Promise<void> {
    const targets = calls.filter((p) => p.head && p.item && p.dropReason === null);
    if (targets.length === 0) return;
    const read = () => targets.map((p) => withEnvelope(p.item!, envelope));
    const indices = targets.map((p) => p.batchIndex ?? 0);
    const verdicts = await this.checks.requestVerdicts(plan, { body: request.body, route: request.route, indices }, read);
    for (let i = 0; i < targets.length; i++) {
      const v = verdicts[i];
      if (v) targets[i]!.verdict = v;
    }
  }

  /**
   * A call's verdict under a source's plan as it is now (the API's check and recheck), never compiling
   * on the loop; null for a source without a plan, a 409 for one whose plan does not compile.
   */
  async verdictForSource(sourceId: string, call: Record<string, unknown>, envelope: Envelope): Promise<PlanVerdict | null> {
    const c = this.connections.get(sourceId);
    if (!c) return null;
    await this.ensureGated(c.planId);
    const plan = this.planFor(sourceId);
    const [v] = plan ? await this.checks.verdicts(plan, [withEnvelope(call, envelope)]) : [undefined];
    if (v) return v;
    const why = this.unusable.get(c.planId);
    if (why === undefined) return null;
    throw conflict(`tracking plan "${this.plans.get(c.planId)?.name ?? c.planId}" does not compile (${why}): save it again with rules that compile`);
  }

  /** A 409 when the source is connected to a plan that does not compile (its calls cannot be checked). */
  async assertCheckable(sourceId: string): Promise<void> {
    const c = this.connections.get(sourceId);
    if (!c) return;
    await this.ensureGated(c.planId);
    const why = this.unusable.get(c.planId);
    if (why !== undefined) throw conflict(`tracking plan "${this.plans.get(c.planId)?.name ?? c.planId}" does not compile (${why}): save it again with rules that compile`);
  }

  /** A call's verdict under a stored plan (flagging only), or a 409 when the plan does not compile. */
  async verdictForPlan(planId: string, call: Record<string, unknown>): Promise<PlanVerdict> {
    const p = this.plans.get(planId);
    if (!p) throw notFound(`tracking plan ${planId}`);
    await this.ensureGated(planId);
    const plan = this.unusable.has(planId) ? undefined : this.toCheck(planId, FLAG_ONLY);
    const [v] = plan ? await this.checks.verdicts(plan, [call]) : [undefined];
    if (v) return v;
    throw conflict(`tracking plan "${p.name}" does not compile (${this.unusable.get(planId) ?? 'unknown'}): save it again with rules that compile`);
  }

  /** A call's verdict under rules not saved (Compose, the rule editor), compiled in a worker; a 400 naming a rule that does not compile. */
  async verdictForRules(rules: TrackingPlanRule[], call: Record<string, unknown>): Promise<PlanVerdict> {
    const plan = { key: `draft:${rulesHash(rules)}`, id: 'draft', name: 'draft', rules };
    try {
      const [v] = await this.pool().check(plan, FLAG_ONLY, [call], [0]);
      return v!;
    } catch (err) {
      if (!(err instanceof PlanNotCompiled)) throw err;
      throw refusedRule(new RuleCompileError(err.index, rules[err.index]!, err.reason), 'rules');
    }
  }

  /** Rules about to be saved (create, replace, import), compiled in a worker first: a 400 naming the rule that does not compile. */
  async prepare(input: { name: string; rules: TrackingPlanRule[] }): Promise<void> {
    const outcome = await this.gates.prepare(input.name, input.rules);
    if (!outcome.ok) throw refusedRule(new RuleCompileError(outcome.index, input.rules[outcome.index]!, outcome.reason), 'rules');
  }

  /** A stored plan (by name) compiled in a worker if it was not yet, before a source is connected to it. */
  async prepareConnection(name: string): Promise<void> {
    const p = this.byName(name);
    if (p) await this.ensureGated(p.id);
  }

  /** A config's plans compiled in workers before the import checks them (planConfig), which then compiles nothing on the loop. */
  async prepareConfig(config: Config): Promise<void> {
    for (const p of config.trackingPlans) if (!this.storedAs(p)) await this.gates.prepareConfig(p.name, p.rules);
    // Stored plans the file connects, as planConfig will judge them; not one the file repeats as stored
    // with its connection (`serve --config` at every start): that is left to the start's warm-up.
    for (const s of config.sources) {
      const name = s.trackingPlan?.name;
      const stored = name === undefined ? undefined : this.byName(name);
      if (!stored) continue;
      const given = config.trackingPlans.find((p) => p.name === name);
      if (given && (!this.storedAs(given) || this.connectedAs(this.store.sources.byName(s.name)?.id, name!, s.trackingPlan!))) continue;
      await this.ensureGated(stored.id);
    }
  }

  /** A stored plan compiled in a worker unless it is compiled, gated or set aside already. */
  private async ensureGated(id: string): Promise<void> {
    const p = this.plans.get(id);
    if (!p || this.unusable.has(id) || this.gates.isGated(id, p.updatedAt) || this.compiledAt.get(id) === p.updatedAt) return;
    await this.gatePlan(id);
  }

  /** Compiles a stored plan in a worker: a rule that does not compile sets the plan aside (said once); slow rules stay off the loop. */
  private async gatePlan(id: string): Promise<void> {
    const p = this.plans.get(id);
    if (!p) return;
    const at = p.updatedAt;
    const outcome = await this.gates.compile(`${id}:${at}`, id, p.name, p.rules);
    // Saved again meanwhile: that version is the one to judge.
    if (this.plans.get(id)?.updatedAt !== at) return;
    if (outcome.ok) this.gates.markGated(id, at);
    else this.markUnusable(id, at, new RuleCompileError(outcome.index, p.rules[outcome.index]!, outcome.reason).message);
  }

  /** A worker could not compile a plan its calls needed (stored by an older lab, not gated yet): set aside as warmUp would. */
  private notCompiledInWorker(id: string, updatedAt: number, err: PlanNotCompiled): void {
    const p = this.plans.get(id);
    if (!p || p.updatedAt !== updatedAt) return;
    this.markUnusable(id, updatedAt, new RuleCompileError(err.index, p.rules[err.index]!, err.reason).message);
    this.bySource = new Map([...this.bySource].filter(([, c]) => c.plan.id !== id));
  }

  /** Writes a checked call's verdict inside the collector's write job (arrivals.ts), so it is durable with the call. */
  readonly recorder = (callId: number, sourceId: string, call: ArrivingCall, receivedAt: number, label: string | null): void => {
    if (call.verdict) this.repo.recordVerdict(callId, sourceId, receivedAt, call.type, label, call.verdict);
  };

  /** Notes a request whose calls were checked (one row per request: clean calls have none of their own). */
  readonly checkedRecorder = (requestId: number, sourceId: string, receivedAt: number, calls: ArrivingCall[]): void => {
    let checked = 0;
    let planId = '';
    // Counted by verdict first: the clean calls of an event share one (check.ts), so a batch of one
    // event is one entry here, not a count per rule per call.
    const byVerdict = new Map<PlanVerdict, number>();
    for (const c of calls) {
      const v = c.verdict;
      if (!v) continue;
      checked++;
      planId = v.planId;
      byVerdict.set(v, (byVerdict.get(v) ?? 0) + 1);
    }
    const rules: Record<string, number> = {};
    for (const [v, n] of byVerdict) for (const r of v.rules ?? []) rules[r] = (rules[r] ?? 0) + n;
    if (checked > 0) this.repo.recordChecked(requestId, sourceId, planId, receivedAt, checked, JSON.stringify(rules));
  };

  /** Per rule of a plan since a time: calls it checked, passed and failed, the worst first (the plan screen). */
  ruleStats(planId: string, since: number): RuleStats[] {
    const p = this.plans.get(planId);
    if (!p) throw notFound(`tracking plan ${planId}`);
    const matched = this.repo.matchedByRule(planId, since);
    const failed = this.repo.failedByRule(planId, since);
    return p.rules
      .map((r) => {
        const id = ruleId(r);
        const m = matched.get(id) ?? 0;
        const f = failed.get(id) ?? 0;
        return { type: r.type, key: r.key ?? null, version: r.version, matched: m, passed: Math.max(0, m - f), failed: f };
      })
      // Worst first: most calls failed, then the larger share of its calls failed, then the busiest.
      .sort((a, b) => b.failed - a.failed || b.failed / Math.max(1, b.matched) - a.failed / Math.max(1, a.matched) || b.matched - a.matched);
  }

  /** What a plan's enforcement kept out since a time (the plans screen's card). */
  offPlanStats(planId: string, since: number): OffPlanStats {
    const { events, distinct } = this.repo.unplannedEventsSince(planId, since, UNPLANNED_EVENTS_SHOWN);
    return { blocked: this.repo.blockedSince(planId, since), unplannedEvents: events, more: Math.max(0, distinct - events.length) };
  }

  /** Checks one received call; the batch envelope's context is merged under the call's own, as normalization does. */
  check(c: SourceChecker, item: Record<string, unknown>, envelope: Envelope): PlanVerdict {
    return checkCall(c.plan, c.settings, withEnvelope(item, envelope));
  }

  /** A call's violations and plan check as its detail shows them (null, null when it was not checked). */
  detailOf(callId: number, status: string): Pick<CallDetail, 'violations' | 'planCheck'> {
    const row = this.repo.ofCall(callId);
    if (!row) {
      // No row of its own: clean if its request was checked (a dropped call never is).
      const requestId = status === 'dropped' ? undefined : this.store.calls.requestIdOf(callId);
      const planId = requestId === undefined ? undefined : this.repo.checkedPlanOf(requestId);
      if (planId === undefined) return { violations: null, planCheck: null };
      return { violations: [], planCheck: { planId, planName: this.plans.get(planId)?.name ?? null, blocked: null, omitted: [] } };
    }
    return { violations: row.violations, planCheck: { planId: row.planId, planName: this.plans.get(row.planId)?.name ?? null, blocked: row.blocked, omitted: row.omitted } };
  }

  // ---------- plans ----------

  list(): TrackingPlan[] {
    return [...this.plans.values()].sort((a, b) => a.name.localeCompare(b.name)).map((p) => this.view(p));
  }

  byName(name: string): StoredPlan | undefined {
    for (const p of this.plans.values()) if (p.name === name) return p;
    return undefined;
  }

  get(id: string): TrackingPlan {
    const p = this.plans.get(id);
    if (!p) throw notFound(`tracking plan ${id}`);
    return this.view(p);
  }

  /**
   * Every plan as list() gives it, once each has been compiled (in a worker) since it was saved: a
   * plan's `problem` is then known. Read before the start's slices reached a plan that does not
   * compile, it looked checkable, and Compose's check of its source was answered 409 (issue 44).
   */
  async listKnown(): Promise<TrackingPlan[]> {
    for (const id of [...this.plans.keys()]) await this.ensureGated(id);
    return this.list();
  }

  /** One plan as get() gives it, its `problem` known (listKnown). */
  async getKnown(id: string): Promise<TrackingPlan> {
    await this.ensureGated(id);
    return this.get(id);
  }

  create(input: TrackingPlanInput, now: number): TrackingPlan {
    if (this.byName(input.name)) throw refused(409, `a tracking plan named "${input.name}" exists`, 'name', 'already used by another plan');
    const p: StoredPlan = { id: randomUUID(), name: input.name, rules: input.rules, createdAt: now, updatedAt: now };
    this.save(p);
    return this.view(p);
  }

  replace(id: string, input: TrackingPlanInput, now: number): TrackingPlan {
    const old = this.plans.get(id);
    if (!old) throw notFound(`tracking plan ${id}`);
    const other = this.byName(input.name);
    if (other && other.id !== id) throw refused(409, `a tracking plan named "${input.name}" exists`, 'name', 'already used by another plan');
    const p: StoredPlan = { ...old, name: input.name, rules: input.rules, updatedAt: Math.max(now, old.updatedAt + 1) };
    this.save(p);
    return this.view(p);
  }

  delete(id: string): void {
    if (!this.plans.has(id)) throw notFound(`tracking plan ${id}`);
    this.repo.deletePlan(id);
    this.reload();
  }

  /** Compiles first (a rule that does not compile is refused, naming it), then writes and swaps the mirror. */
  private save(p: StoredPlan): void {
    // Compiled in a worker just before (prepare): the loop compiles it later, in warmUp's slices.
    const compiled = this.gates.takePrepared(p.rules) ? undefined : compileOrRefuse(p, 'rules', this.reuse(), this.heavy);
    this.repo.savePlan(p);
    const was = this.compiled.get(p.id);
    this.plans.set(p.id, p);
    this.pending.delete(p.id);
    this.unusable.delete(p.id);
    this.reported.delete(p.id);
    if (compiled) {
      this.compiled.set(p.id, compiled);
      this.compiledAt.set(p.id, p.updatedAt);
    } else {
      this.compiled.delete(p.id);
      this.compiledAt.delete(p.id);
      this.gates.markGated(p.id, p.updatedAt);
      // Its unchanged rules are taken from the version before when the slices compile it.
      if (was) this.reusable = [was, ...this.reusable].slice(0, REUSABLE_KEPT);
    }
    this.connectSources();
  }

  // ---------- the config file ----------

  /**
   * A config's plans and connections, checked against what is stored (applyConfig): problems with the
   * path of each (a rule that does not compile, a connection to a plan neither stored nor in the file),
   * and the write, to run inside applyConfig's transaction; reload() after it, committed or not.
   */
  planConfig(config: Config, sourceIdOf: (name: string) => string | undefined, now: number): { problems: { path: string; message: string }[]; write: () => void } {
    const problems: { path: string; message: string }[] = [];
    this.checkedForImport = [];
    // A plan the file gives as it is stored (a `serve --config` at every start) is left as it is: not
    // compiled here (it is, after the start, as stored plans are), nor written again.
    const unchanged = new Set(config.trackingPlans.filter((p) => this.storedAs(p)).map((p) => p.name));
    config.trackingPlans.forEach((p, i) => {
      if (unchanged.has(p.name)) return;
      // Compiled in a worker before (prepareConfig): its verdict, nothing compiled on the loop.
      const gated = this.gates.configOutcome(p.rules);
      if (gated) {
        if (!gated.ok) problems.push({ path: `trackingPlans[${i}].rules[${gated.index}].jsonSchema`, message: new RuleCompileError(gated.index, p.rules[gated.index]!, gated.reason).message });
        return;
      }
      try {
        this.checkedForImport.push(compilePlan('check', p.name, p.rules, [...this.compiled.values(), ...this.checkedForImport], this.heavy));
      } catch (err) {
        if (!(err instanceof RuleCompileError)) throw err;
        problems.push({ path: `trackingPlans[${i}].rules[${err.index}].jsonSchema`, message: err.message });
      }
    });
    const names = new Set([...[...this.plans.values()].map((p) => p.name), ...config.trackingPlans.map((p) => p.name)]);
    const inFile = new Set(config.trackingPlans.map((p) => p.name));
    config.sources.forEach((s, i) => {
      const name = s.trackingPlan?.name;
      if (name === undefined) return;
      if (!names.has(name)) problems.push({ path: `sources[${i}].trackingPlan.name`, message: `no tracking plan is named "${name}"` });
      else if (!inFile.has(name) || (unchanged.has(name) && !this.connectedAs(sourceIdOf(s.name), name, s.trackingPlan!))) {
        // A stored plan that does not compile (an older lab let it in) is refused here as connecting to
        // it is: also when the file gives it as stored (so not compiled above), unless the file only
        // repeats a connection that is stored already (a `serve --config` at every start).
        const id = this.byName(name)!.id;
        const reason = this.unusable.get(id) ?? (this.gates.isGated(id, this.plans.get(id)?.updatedAt) ? null : this.compileProblem(id));
        if (reason) problems.push({ path: `sources[${i}].trackingPlan.name`, message: `tracking plan "${name}" does not compile (${reason}): give it in the file with rules that compile` });
      }
    });
    const write = () => {
      const ids = new Map<string, string>();
      for (const p of this.plans.values()) ids.set(p.name, p.id);
      for (const p of config.trackingPlans) {
        const old = this.byName(p.name);
        const id = old?.id ?? randomUUID();
        ids.set(p.name, id);
        if (unchanged.has(p.name)) continue;
        this.repo.savePlan({ id, name: p.name, rules: p.rules, createdAt: old?.createdAt ?? now, updatedAt: old ? Math.max(now, old.updatedAt + 1) : now });
      }
      for (const s of config.sources) {
        if (s.trackingPlan === undefined) continue;
        const sourceId = sourceIdOf(s.name);
        if (!sourceId) continue;
        if (s.trackingPlan === null) this.repo.disconnect(sourceId);
        else {
          const c = s.trackingPlan;
          this.repo.connect({ sourceId, planId: ids.get(c.name)!, unplannedEvents: c.unplannedEvents, unplannedProperties: c.unplannedProperties, violations: c.violations });
        }
      }
    };
    return { problems, write };
  }

  /** Whether a source is stored connected to this plan with these settings. */
  private connectedAs(sourceId: string | undefined, plan: string, c: TrackingPlanConnection): boolean {
    const stored = sourceId === undefined ? undefined : this.connections.get(sourceId);
    return (
      stored !== undefined &&
      stored.planId === this.byName(plan)?.id &&
      stored.unplannedEvents === c.unplannedEvents &&
      stored.unplannedProperties === c.unplannedProperties &&
      stored.violations === c.violations
    );
  }

  /** Whether a plan of the file is stored with this name and these rules. */
  private storedAs(p: { name: string; rules: TrackingPlanRule[] }): boolean {
    const stored = this.byName(p.name);
    return stored !== undefined && JSON.stringify(stored.rules) === JSON.stringify(p.rules);
  }

  // ---------- connections ----------

  connect(sourceId: string, conn: TrackingPlanConnection | null): TrackingPlan | null {
    if (!this.store.sources.get(sourceId)) throw notFound(`source ${sourceId}`);
    if (conn === null) {
      this.repo.disconnect(sourceId);
      this.bySource.delete(sourceId);
      this.connections.delete(sourceId);
      return null;
    }
    const p = this.byName(conn.name);
    if (!p) throw refused(400, `no tracking plan is named "${conn.name}"`, 'name', 'no tracking plan has this name');
    const settings: StoredConnection = { sourceId, planId: p.id, unplannedEvents: conn.unplannedEvents, unplannedProperties: conn.unplannedProperties, violations: conn.violations };
    const why = this.unusable.get(p.id) ?? (this.gates.isGated(p.id, p.updatedAt) ? null : this.compileProblem(p.id));
    if (why !== null) throw refused(409, `tracking plan "${p.name}" does not compile (${why}): save it again with rules that compile, then connect it`, 'name', 'this plan does not compile');
    this.repo.connect(settings);
    this.connections.set(sourceId, settings);
    const plan = this.compiled.get(p.id);
    if (plan) this.bySource.set(sourceId, { plan, settings });
    // Not compiled on the loop yet (a worker compiled it): the warm-up's slices do it, its calls meanwhile go to the workers.
    else this.kick();
    return this.view(p);
  }

  connectionOf(sourceId: string): (TrackingPlanConnection & { planId: string }) | null {
    const c = this.connections.get(sourceId);
    const p = c && this.plans.get(c.planId);
    if (!c || !p) return null;
    return { name: p.name, planId: c.planId, unplannedEvents: c.unplannedEvents, unplannedProperties: c.unplannedProperties, violations: c.violations };
  }

  private view(p: StoredPlan): TrackingPlan {
    const sources: TrackingPlan['sources'] = [];
    for (const c of this.connections.values()) {
      if (c.planId !== p.id) continue;
      const s = this.store.sources.get(c.sourceId);
      if (!s) continue;
      sources.push({ sourceId: s.id, sourceName: s.name, unplannedEvents: c.unplannedEvents, unplannedProperties: c.unplannedProperties, violations: c.violations });
    }
    const problem = this.unusable.get(p.id);
    return { id: p.id, name: p.name, rules: p.rules, createdAt: formatTimestamp(p.createdAt), updatedAt: formatTimestamp(p.updatedAt), sources, ...(problem ? { problem } : {}) };
  }
}

/** Compiles a plan's rules; a rule that does not compile is a 400 naming it (`rules[3].jsonSchema`). */
export function compileOrRefuse(p: { id: string; name: string; rules: TrackingPlanRule[] }, path: string, reuse: readonly CompiledPlan[] = [], heavy?: HeavyRules): CompiledPlan {
  try {
    return compilePlan(p.id, p.name, p.rules, reuse, heavy);
  } catch (err) {
    if (err instanceof RuleCompileError) throw refusedRule(err, path);
    throw err;
  }
}

/** A rule that does not compile: a 400 naming it (`rules[3].jsonSchema`), with the reason. */
function refusedRule(err: RuleCompileError, path: string): PlanRefused {
  return refused(400, err.message, `${path}[${err.index}].jsonSchema`, err.reason);
}

/** The API's checks flag; they never block or omit (nothing is stored). */
const FLAG_ONLY = { unplannedEvents: 'allow', unplannedProperties: 'allow', violations: 'allow' } as const;

/** Compiled versions of saved plans kept for the next compile to take their unchanged rules from. */
const REUSABLE_KEPT = 4;

/** A refusal naming the field at fault (answered with `fields`, as config and input errors are). */
export class PlanRefused extends HttpError {
  readonly fields: FieldError[];
  constructor(status: number, message: string, fields: FieldError[]) {
    super(status, message);
    this.fields = fields;
  }
}

function refused(status: number, message: string, path: string, fieldMessage: string): PlanRefused {
  return new PlanRefused(status, message, [{ path, message: fieldMessage }]);
}

