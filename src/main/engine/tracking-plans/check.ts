import { AggregateAjvError } from '@segment/ajv-human-errors';
import { ruleId, type PlanVerdict, type TrackingPlanConnection, type TrackingPlanRule, type Violation, type ViolationKind } from '../../../shared/tracking-plan.schema';
import { compileRule, type CompiledRule, type ErrorObject } from './compile';
import type { ValidateFunction } from 'ajv';
import { mergeUnder, requestItems, type Envelope } from '../../../shared/normalize';
import { isPlainObject } from '../../../shared/message-rules';

// Checking one call against its source's plan (issue 24): which rules apply, what Ajv found, in
// Segment's words (ajv-human-errors), and what Protocols' enforcement makes of it. Pure apart from
// the compiled validators: the engine's ingest and the "check" operations both use it.

/** A call keeps at most this many violations (a hostile call could otherwise store thousands). */
export const MAX_VIOLATIONS_PER_CALL = 50;

/**
 * Ajv errors worded per rule: an array of 15,000 wrong items makes 15,000 errors, which Ajv finds in
 * milliseconds but wording them all took 255 ms; more than a call keeps are never shown.
 */
const MAX_ERRORS_DESCRIBED = 4 * MAX_VIOLATIONS_PER_CALL;

export interface CompiledPlan {
  id: string;
  name: string;
  /** Rules by type, then key ('' for none), newest version first: looked up per call without building a key. */
  rules: Map<string, Map<string, CompiledRule[]>>;
  /** The same rules by their content (JSON), for a later compile to take the unchanged ones from. */
  byContent: Map<string, CompiledRule>;
  /**
   * selectRules' answers so far, by call type, then the event or page name that has a rule: the same
   * event gets the same choice, and its calls that pass share one verdict (RuleChoice.clean). Only
   * names the plan has are keys (an unplanned event is not kept; a page without a rule of its own is
   * kept as ''), so it holds at most one entry per rule and call type. Emptied as a rule is added.
   */
  choices: Map<string, Map<string, RuleChoice>>;
}

/** The rules a call is checked against (selectRules), and the verdict of a call they pass with nothing to say. */
export interface RuleChoice {
  rules: CompiledRule[];
  unplanned: boolean;
  /** Made at first need, frozen: shared by every clean call of this choice. */
  clean?: PlanVerdict;
}


/**
 * Compiles every rule of a plan; throws an Error naming the first rule that does not compile. A rule
 * with the same content as one of `reuse` plans' is taken from it: Ajv takes about a millisecond a
 * rule, so saving a 1,000-rule plan with one rule changed held the collector for about a second.
 */
export function compilePlan(id: string, name: string, rules: TrackingPlanRule[], reuse: readonly CompiledPlan[] = [], heavy?: HeavyRules): CompiledPlan {
  const compiler = new PlanCompiler(id, name, rules, reuse, heavy);
  while (compiler.step());
  return compiler.plan;
}

/**
 * compilePlan a rule at a time, for work that must not hold the event loop: a plan loaded at start is
 * compiled in slices between answers (TrackingPlans.warmUp), and finished at once if a call needs it first.
 */
export class PlanCompiler {
  readonly plan: CompiledPlan;
  private next = 0;

  constructor(
    id: string,
    name: string,
    private readonly rules: TrackingPlanRule[],
    private readonly reuse: readonly CompiledPlan[] = [],
    private readonly heavy?: HeavyRules,
  ) {
    this.plan = { id, name, rules: new Map(), byContent: new Map(), choices: new Map() };
  }

  /** The index of the rule the next step compiles. */
  get index(): number {
    return this.next;
  }

  /** Compiles the next rule (throws RuleCompileError naming it); false once every rule is compiled. */
  step(): boolean {
    const i = this.next;
    const rule = this.rules[i];
    if (rule === undefined) return false;
    const { rules: map, byContent } = this.plan;
    const content = JSON.stringify(rule);
    let compiled = byContent.get(content);
    for (let p = 0; !compiled && p < this.reuse.length; p++) compiled = this.reuse[p]!.byContent.get(content);
    try {
      const costUs = compiled ? undefined : this.heavy?.(content);
      compiled ??= costUs ? pooledRule(rule, costUs) : compileRule(rule);
    } catch (err) {
      throw new RuleCompileError(i, rule, (err as Error).message);
    }
    byContent.set(content, compiled);
    let byKey = map.get(rule.type);
    if (!byKey) map.set(rule.type, (byKey = new Map()));
    const list = byKey.get(rule.key ?? '') ?? [];
    list.push(compiled);
    list.sort((a, b) => b.rule.version - a.rule.version);
    byKey.set(rule.key ?? '', list);
    this.plan.choices.clear();
    this.next = i + 1;
    return this.next < this.rules.length;
  }
}

/**
 * Rules a check worker found slow to compile (check-pool.ts), by content: their estimated cost
 * (work-bounds.ts), or undefined for a rule to compile here. Such a rule is not compiled on the event
 * loop: calls it checks go to the workers (service.ts).
 */
export type HeavyRules = (content: string) => number[] | undefined;

/**
 * A rule compiled only in the check workers: marked `pooled`, so the engine sends the calls it checks
 * there. Its validator and lists compile on first use, for code that checks on the loop regardless
 * (tests' direct calls); the collector and the API never do.
 */
function pooledRule(rule: TrackingPlanRule, costUs: number[]): CompiledRule {
  let real: CompiledRule | undefined;
  const get = () => (real ??= compileRule(rule));
  const validate = ((data: unknown) => {
    const ok = get().validate(data);
    validate.errors = get().validate.errors;
    return ok;
  }) as ValidateFunction;
  const plannedIn = rule.type === 'IDENTIFY' || rule.type === 'GROUP' ? 'traits' : rule.type === 'COMMON' ? null : 'properties';
  return {
    rule,
    id: ruleId(rule),
    validate,
    pooled: true,
    plannedIn,
    costUs,
    get planned() {
      return get().planned;
    },
    get lists() {
      return get().lists;
    },
  };
}

export class RuleCompileError extends Error {
  constructor(
    readonly index: number,
    readonly rule: TrackingPlanRule,
    readonly reason: string,
  ) {
    super(`rule ${rule.type}${rule.key ? ` "${rule.key}"` : ''} version ${rule.version}: its JSON Schema does not compile: ${reason}`);
  }
}

/** A call's shape for selectRules. */
export function shapeOf(call: Record<string, unknown>): CallShape {
  return { type: typeof call.type === 'string' ? call.type : '', event: call.event, name: call.name, context: call.context };
}

/** What a call is, for choosing rules. */
export interface CallShape {
  type: string;
  event?: unknown;
  name?: unknown;
  context?: unknown;
}

const TYPE_RULES: Record<string, 'TRACK' | 'IDENTIFY' | 'GROUP' | 'PAGE' | 'SCREEN' | undefined> = {
  track: 'TRACK',
  identify: 'IDENTIFY',
  group: 'GROUP',
  page: 'PAGE',
  screen: 'SCREEN',
};

/**
 * The rules a call is checked against: the plan's COMMON rule (every call), then its type's rule —
 * TRACK by event name, PAGE/SCREEN by name (else the unkeyed one), IDENTIFY and GROUP. The version is
 * the one the call asks for in context.protocols.event_version (Segment's event versioning) when the
 * plan has it, else the newest. `unplanned` is set for a track call whose event the plan lacks.
 */
export function selectRules(plan: CompiledPlan, call: CallShape): RuleChoice {
  const asked = askedVersion(call.context);
  // A version asked for, or an event that is not a string, is chosen anew (rare), and so is an
  // unplanned event (names a sender makes up must not fill the cache); the rest are kept.
  const ruleType = Object.hasOwn(TYPE_RULES, call.type) ? TYPE_RULES[call.type] : undefined;
  // Types with no rules of their own (alias, or one the plan cannot know) are kept as one.
  const type = ruleType ? call.type : '';
  let label: string | null = '';
  if (asked !== null) label = null;
  else if (ruleType === 'TRACK') label = typeof call.event === 'string' ? call.event : null;
  else if ((ruleType === 'PAGE' || ruleType === 'SCREEN') && typeof call.name === 'string' && plan.rules.get(ruleType)?.has(call.name)) label = call.name;
  if (label === null) return chooseRules(plan, call, asked);
  let byLabel = plan.choices.get(type);
  const kept = byLabel?.get(label);
  if (kept) return kept;
  const choice = chooseRules(plan, call, asked);
  if (choice.unplanned) return choice;
  if (!byLabel) plan.choices.set(type, (byLabel = new Map()));
  byLabel.set(label, choice);
  return choice;
}

function chooseRules(plan: CompiledPlan, call: CallShape, asked: number | null): RuleChoice {
  const out: CompiledRule[] = [];
  const common = pick(plan.rules.get('COMMON')?.get(''), asked);
  if (common) out.push(common);
  const type = TYPE_RULES[call.type];
  if (!type) return { rules: out, unplanned: false };
  const ofType = plan.rules.get(type);
  if (type === 'TRACK') {
    const own = typeof call.event === 'string' ? pick(ofType?.get(call.event), asked) : undefined;
    if (own) out.push(own);
    return { rules: out, unplanned: !own };
  }
  const named = (type === 'PAGE' || type === 'SCREEN') && typeof call.name === 'string' ? ofType?.get(call.name) : undefined;
  const own = pick(named ?? ofType?.get(''), asked);
  if (own) out.push(own);
  return { rules: out, unplanned: false };
}

function askedVersion(context: unknown): number | null {
  const protocols = typeof context === 'object' && context !== null ? (context as Record<string, unknown>).protocols : undefined;
  const v = typeof protocols === 'object' && protocols !== null ? (protocols as Record<string, unknown>).event_version : undefined;
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}

function pick(versions: CompiledRule[] | undefined, asked: number | null): CompiledRule | undefined {
  if (!versions) return undefined;
  return (asked !== null ? versions.find((r) => r.rule.version === asked) : undefined) ?? versions[0];
}

export type Enforcement = Pick<TrackingPlanConnection, 'unplannedEvents' | 'unplannedProperties' | 'violations'>;

/**
 * The verdict of a call whose check did not finish (check-pool.ts): ran past its budget, or its
 * worker stopped. Never a pass: the call is flagged `check_timeout`, and blocked under
 * `violations: block` as any violation is; with `allow` it is forwarded as it arrived.
 */
export function unfinishedVerdict(plan: { id: string; name: string }, settings: Enforcement, why: string): PlanVerdict {
  const message = `The call was not checked against the tracking plan "${plan.name}": ${why}.`;
  return { planId: plan.id, violations: [{ kind: 'check_timeout', path: '', message, rule: null }], blocked: settings.violations === 'block' ? message : null, omitted: [], rules: [] };
}

/** Checks one call (as received, the batch envelope's context merged under its own) against the plan. */
export function checkCall(plan: CompiledPlan, settings: Enforcement, call: Record<string, unknown>, selected?: RuleChoice): PlanVerdict {
  const choice = selected ?? selectRules(plan, shapeOf(call));
  const { rules, unplanned } = choice;
  // Made at the first finding: most calls have none, and then build nothing (their choice's verdict).
  let f: Findings | null = null;
  if (unplanned) {
    const message =
      typeof call.event === 'string'
        ? `Event "${call.event}" is not in the tracking plan "${plan.name}".`
        : `A track call without an event name (a string) is not in the tracking plan "${plan.name}".`;
    (f ??= new Findings()).add({ kind: 'unplanned_event', path: '/event', message, value: call.event, rule: null });
  }

  const omit = settings.unplannedProperties === 'omit';
  // What the COMMON rule lists counts as planned for every call (Segment's common properties).
  const common = omit ? rules.find((c) => c.rule.type === 'COMMON') : undefined;
  for (const c of rules) {
    if (omit && c.planned && c.plannedIn) {
      const part = call[c.plannedIn];
      const own = c.lists[c.plannedIn];
      const shared = common?.lists[c.plannedIn];
      const isPlanned = (k: string) =>
        own.keys?.has(k) || own.patterns.some((p) => p.test(k)) || shared?.keys?.has(k) || shared?.patterns.some((p) => p.test(k));
      if (typeof part === 'object' && part !== null && !Array.isArray(part)) {
        for (const k of Object.keys(part)) {
          if (isPlanned(k)) continue;
          const path = `/${c.plannedIn}/${escapePointer(k)}`;
          (f ??= new Findings()).omitted.push(path);
          f.add({ kind: 'unplanned_property', path, message: `The property "${k}" is not in the plan: omitted from what is forwarded.`, value: (part as Record<string, unknown>)[k], rule: refOf(c) });
        }
      }
    }
    if (c.validate(call)) continue;
    const ref = refOf(c);
    for (const v of describeErrors((c.validate.errors ?? []).slice(0, MAX_ERRORS_DESCRIBED), call)) (f ??= new Findings()).add({ ...v, rule: ref });
  }
  if (f === null) return (choice.clean ??= cleanVerdict(plan.id, rules));
  const { violations, omitted } = f;
  let blocked: string | null = null;
  if (unplanned && settings.unplannedEvents === 'block') blocked = typeof call.event === 'string' ? `unplanned event "${call.event}"` : 'unplanned event (no event name)';
  else if (settings.violations === 'block') {
    const first = violations.find((v) => v.kind !== 'unplanned_event' && !(v.kind === 'unplanned_property' && omitted.includes(v.path)));
    if (first) blocked = first.message;
  }
  return { planId: plan.id, violations, blocked, omitted, rules: rules.map((c) => c.id) };
}

/** A call's violations (each kind and path once, at most MAX_VIOLATIONS_PER_CALL) and the properties omitted. */
class Findings {
  readonly violations: Violation[] = [];
  readonly omitted: string[] = [];
  private readonly seen = new Set<string>();

  add(v: Violation): void {
    const k = `${v.kind}\u0000${v.path}`;
    if (this.seen.has(k) || this.violations.length >= MAX_VIOLATIONS_PER_CALL) return;
    this.seen.add(k);
    this.violations.push(v);
  }
}

const refOf = (c: CompiledRule) => ({ type: c.rule.type, key: c.rule.key ?? null, version: c.rule.version });

/** The verdict of a call that passed these rules with nothing to say: frozen, as every clean call of the choice shares it. */
function cleanVerdict(planId: string, rules: CompiledRule[]): PlanVerdict {
  const none = Object.freeze([]) as unknown as never[];
  return Object.freeze({ planId, violations: none, blocked: null, omitted: none, rules: Object.freeze(rules.map((c) => c.id)) as string[] });
}

/** Ajv's errors as violations, worded by Segment's ajv-human-errors, each with its JSON pointer and value. */
export function describeErrors(errors: ErrorObject[], data: unknown): Omit<Violation, 'rule'>[] {
  const human = humanMessages(errors);
  return errors.map((e, i) => {
    const kind = kindOf(e);
    const extra = e.keyword === 'required' ? e.params.missingProperty : e.keyword === 'additionalProperties' ? e.params.additionalProperty : undefined;
    const path = typeof extra === 'string' ? `${e.instancePath}/${escapePointer(extra)}` : e.instancePath;
    let message = human[i]?.message ?? `${e.instancePath || 'The call'} ${e.message ?? 'is invalid'}`;
    if (e.keyword === 'pattern') message = `${message.replace(/\.$/, '')}: it must match the pattern ${String(e.params.pattern)}.`;
    const value = kind === 'required_missing' ? undefined : valueAt(data, path);
    return value === undefined ? { kind, path, message } : { kind, path, message, value };
  });
}

/**
 * Segment's wording of each error; Ajv's own where the formatter throws (it does on an
 * additionalProperties error of a schema with patternProperties and no properties: Object.keys(undefined)).
 */
function humanMessages(errors: ErrorObject[]): { message?: string }[] {
  try {
    return new AggregateAjvError(errors, { fieldLabels: 'jsonPointer' }).toJSON();
  } catch {
    return errors.map((e) => {
      try {
        return new AggregateAjvError([e], { fieldLabels: 'jsonPointer' }).toJSON()[0] ?? {};
      } catch {
        return {};
      }
    });
  }
}

function kindOf(e: ErrorObject): ViolationKind {
  if (e.keyword === 'required') return 'required_missing';
  if (e.keyword === 'type') return 'wrong_type';
  if (e.keyword === 'additionalProperties') return 'unplanned_property';
  return 'schema';
}

export function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function valueAt(data: unknown, pointer: string): unknown {
  if (pointer === '') return data;
  let cur: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const k = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

/**
 * The batch envelope's context merged under the call's own, as normalization does (mergeUnder: objects
 * inside merged too, so an envelope's `library.name` and a call's `library.version` are both seen).
 * A call whose own context already holds every key of the envelope's, at every depth, is checked as it
 * is: merged it would hold the same keys and values, only in another order. No schema keyword's answer
 * depends on that order, but Ajv lists an object's unplanned keys in it, so with two or more such
 * errors in `context` the first (the reason a blocked call gives) may be another. Copying each call
 * was the largest single cost of a plan on the event loop (docs/performance.md).
 */
export function withEnvelope(item: Record<string, unknown>, envelope: Envelope): Record<string, unknown> {
  const envContext = envelope.context;
  if (!isPlainObject(envContext)) return item;
  const own = isPlainObject(item.context) ? item.context : undefined;
  if (own && covers(own, envContext)) return item;
  return { ...item, context: mergeUnder(envContext, own ?? {}) };
}

/** Whether merging `under` beneath `own` would add nothing to it. */
function covers(own: Record<string, unknown>, under: Record<string, unknown>): boolean {
  for (const k in under) {
    if (!Object.hasOwn(own, k)) return false;
    const a = under[k];
    const b = own[k];
    if (isPlainObject(a) && isPlainObject(b) && !covers(b, a)) return false;
  }
  return true;
}

/** A request's calls as the collector read them: its body, its route, and which of its items are checked. */
export interface RequestCalls {
  /** The body's bytes (UTF-8 JSON), in shared memory: a task carrying it does not copy it. */
  body: Uint8Array;
  route: string;
  /** Items of requestItems(body).items, in order. */
  indices: number[];
}

/** The body in shared memory, for a RequestCalls. */
export function sharedBody(body: Uint8Array): Uint8Array {
  const shared = new Uint8Array(new SharedArrayBuffer(body.byteLength));
  shared.set(body);
  return shared;
}

/** The calls of a RequestCalls as checkArriving gives them, read again from the body (in a check worker). */
export function callsOfRequest(r: RequestCalls): Record<string, unknown>[] {
  const text = Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength).toString('utf8');
  const { items, envelope } = requestItems(JSON.parse(text) as Record<string, unknown>, r.route as Parameters<typeof requestItems>[1]);
  return r.indices.map((i) => withEnvelope(items[i] as Record<string, unknown>, envelope));
}
