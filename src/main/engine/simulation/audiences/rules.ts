import type { AudienceRule, ComputedTraitDef, EventCondition, TraitCondition } from '../../../../shared/audience.schema';
import type { Json, JsonObject } from '../../../../shared/types';

// Pure evaluation of audience rules and computed traits over profiles (SPEC §6). No I/O: the
// profiles come from profiles.ts, `now` from the engine's clock, so tests pin both.

export interface ProfileEvent {
  name: string;
  /** The event's time (its timestamp, ms), so historical imports count where they happened. */
  at: number;
  /** Only loaded for the event a last_property trait reads. */
  properties?: JsonObject;
}

export interface Profile {
  userId: string;
  /** identify traits merged in arrival order: the latest value of each key wins. */
  traits: JsonObject;
  /** Oldest first. */
  events: ProfileEvent[];
}

export type Definition = { type: 'audience'; rule: AudienceRule } | { type: 'computed_trait'; compute: ComputedTraitDef };

const DAY_MS = 86_400_000;

/** "High Value Users" → high_value_users; "lastOrderTotal" → last_order_total. */
export function audienceKey(name: string): string {
  const key = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, '$1_$2')
    .replace(/[^\p{L}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
  return key || 'audience';
}

export function matchesRule(rule: AudienceRule, p: Profile, now: number): boolean {
  const test = (c: AudienceRule['conditions'][number]): boolean =>
    'combine' in c ? matchesRule(c, p, now) : c.kind === 'trait' ? matchesTrait(c, p.traits) : matchesEvent(c, p, now);
  return rule.combine === 'and' ? rule.conditions.every(test) : rule.conditions.some(test);
}

/** An exact key first ("plan.tier" may be a flat key), else a dotted path into nested traits. */
export function traitValue(traits: JsonObject, path: string): Json | undefined {
  if (Object.hasOwn(traits, path)) return traits[path];
  let cur: Json | undefined = traits;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || !Object.hasOwn(cur, part)) return undefined;
    cur = cur[part];
  }
  return cur;
}

function matchesTrait(c: TraitCondition, traits: JsonObject): boolean {
  const v = traitValue(traits, c.trait);
  const present = v !== undefined && v !== null;
  switch (c.op) {
    case 'exists':
      return present;
    case 'not_exists':
      return !present;
    case 'eq':
      return present ? same(v, c.value) : c.value === null;
    case 'neq':
      // A user without the trait does not equal the value.
      return present ? !same(v, c.value) : c.value !== null;
    case 'contains':
      if (!present || c.value === undefined || c.value === null) return false;
      if (Array.isArray(v)) return v.some((item) => same(item, c.value));
      return typeof v === 'string' && v.includes(String(c.value));
    default:
      return present && c.value !== undefined && c.value !== null && compare(v, c.value, c.op);
  }
}

/** Numbers compare as numbers (a numeric string counts as its number), other primitives exactly. */
function same(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  const x = asNumber(a);
  const y = asNumber(b);
  return x !== null && y !== null && (typeof a === 'number' || typeof b === 'number') && x === y;
}

function compare(a: Json, b: string | number | boolean, op: 'gt' | 'gte' | 'lt' | 'lte'): boolean {
  const x = asNumber(a);
  const y = asNumber(b);
  let d: number;
  if (x !== null && y !== null) d = x - y;
  // Two strings compare as text, so ISO dates order correctly.
  else if (typeof a === 'string' && typeof b === 'string') d = a < b ? -1 : a > b ? 1 : 0;
  else return false;
  return op === 'gt' ? d > 0 : op === 'gte' ? d >= 0 : op === 'lt' ? d < 0 : d <= 0;
}

function asNumber(v: Json | undefined): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

export function countEvents(p: Profile, event: string, withinDays: number | undefined, now: number): number {
  const since = withinDays === undefined ? -Infinity : now - withinDays * DAY_MS;
  let n = 0;
  for (const e of p.events) if (e.name === event && e.at >= since) n++;
  return n;
}

function matchesEvent(c: EventCondition, p: Profile, now: number): boolean {
  const n = countEvents(p, c.event, c.withinDays, now);
  return c.op === 'gte' ? n >= c.count : c.op === 'lte' ? n <= c.count : n === c.count;
}

/** A computed trait's value for one profile; undefined when the user has none. */
export function computeValue(def: ComputedTraitDef, p: Profile, now: number): Json | undefined {
  if (def.kind === 'event_count') {
    const n = countEvents(p, def.event, def.withinDays, now);
    return n > 0 ? n : undefined;
  }
  // The latest event of that name that carries the property.
  for (let i = p.events.length - 1; i >= 0; i--) {
    const e = p.events[i];
    if (e.name !== def.event || !e.properties) continue;
    const v = traitValue(e.properties, def.property);
    // A property last sent as null means the user has no value now.
    if (v !== undefined) return v === null ? undefined : v;
  }
  return undefined;
}

/** Who is in (audience: true) or has a value (computed trait), keyed by userId. */
export function evaluate(def: Definition, profiles: Iterable<Profile>, now: number): Map<string, Json> {
  const out = new Map<string, Json>();
  for (const p of profiles) {
    if (def.type === 'audience') {
      if (matchesRule(def.rule, p, now)) out.set(p.userId, true);
    } else {
      const v = computeValue(def.compute, p, now);
      if (v !== undefined) out.set(p.userId, v);
    }
  }
  return out;
}
