import type { Audience, AudienceInput, AudienceRule, ComputedTraitDef, EventCondition, TraitCondition } from '../../../shared/simulation.contract';

// The audience form as editable drafts and their conversion to the API's input. Error keys use the
// engine's paths (`rule.conditions[1].conditions[0].count`) so local and engine messages share fields.

export type TraitOp = TraitCondition['op'];
export type EventOp = EventCondition['op'];

export interface TraitDraft {
  kind: 'trait';
  trait: string;
  op: TraitOp;
  value: string;
}
export interface EventDraft {
  kind: 'event';
  event: string;
  op: EventOp;
  count: string;
  withinDays: string;
}
export interface GroupDraft {
  kind: 'group';
  combine: 'and' | 'or';
  conditions: ConditionDraft[];
}
export type ConditionDraft = TraitDraft | EventDraft | GroupDraft;

export interface ComputeDraft {
  kind: ComputedTraitDef['kind'];
  event: string;
  withinDays: string;
  property: string;
}

export interface AudienceDraft {
  name: string;
  type: 'audience' | 'computed_trait';
  rule: GroupDraft;
  compute: ComputeDraft;
  sourceIds: string[];
  /** Sync interval in minutes; empty = on demand only. */
  syncMinutes: string;
}

export const TRAIT_OPS: { op: TraitOp; label: string; needsValue: boolean }[] = [
  { op: 'eq', label: 'equals', needsValue: true },
  { op: 'neq', label: 'does not equal', needsValue: true },
  { op: 'exists', label: 'exists', needsValue: false },
  { op: 'not_exists', label: 'does not exist', needsValue: false },
  { op: 'gt', label: '>', needsValue: true },
  { op: 'gte', label: '≥', needsValue: true },
  { op: 'lt', label: '<', needsValue: true },
  { op: 'lte', label: '≤', needsValue: true },
  { op: 'contains', label: 'contains', needsValue: true },
];

export const EVENT_OPS: { op: EventOp; label: string }[] = [
  { op: 'gte', label: 'at least' },
  { op: 'lte', label: 'at most' },
  { op: 'eq', label: 'exactly' },
];

export const newTrait = (): TraitDraft => ({ kind: 'trait', trait: '', op: 'eq', value: 'true' });
export const newEvent = (): EventDraft => ({ kind: 'event', event: '', op: 'gte', count: '1', withinDays: '' });
export const newGroup = (): GroupDraft => ({ kind: 'group', combine: 'and', conditions: [newTrait()] });

export function emptyAudienceDraft(sourceIds: string[]): AudienceDraft {
  return {
    name: '',
    type: 'audience',
    rule: newGroup(),
    compute: { kind: 'event_count', event: '', withinDays: '', property: '' },
    sourceIds,
    syncMinutes: '',
  };
}

/** A stored audience as a draft, to edit it in the same form it was made with. */
export function draftOfAudience(a: Audience): AudienceDraft {
  const group = (r: AudienceRule): GroupDraft => ({
    kind: 'group',
    combine: r.combine,
    conditions: r.conditions.map((c): ConditionDraft => {
      if ('combine' in c) return group(c);
      if (c.kind === 'trait') return { kind: 'trait', trait: c.trait, op: c.op, value: c.value === undefined ? 'true' : formatValue(c.value) };
      return { kind: 'event', event: c.event, op: c.op, count: String(c.count), withinDays: c.withinDays === undefined ? '' : String(c.withinDays) };
    }),
  });
  const empty = emptyAudienceDraft(a.sourceIds);
  return {
    ...empty,
    name: a.name,
    type: a.type,
    rule: a.rule ? group(a.rule) : empty.rule,
    compute: a.compute
      ? {
          kind: a.compute.kind,
          event: a.compute.event,
          withinDays: a.compute.kind === 'event_count' && a.compute.withinDays !== undefined ? String(a.compute.withinDays) : '',
          property: a.compute.kind === 'last_property' ? a.compute.property : '',
        }
      : empty.compute,
    syncMinutes: a.syncIntervalMs ? String(a.syncIntervalMs / 60_000) : '',
  };
}

/** `true`, `42`, `null` are JSON values; anything else (or "quoted") is text. */
export function parseValue(text: string): string | number | boolean | null {
  const t = text.trim();
  if (t === 'true') return true;
  if (t === 'false') return false;
  if (t === 'null') return null;
  if (t !== '' && Number.isFinite(Number(t))) return Number(t);
  if (t.length >= 2 && t.startsWith('"') && t.endsWith('"')) return t.slice(1, -1);
  return text;
}

export function formatValue(v: unknown): string {
  if (typeof v === 'string') return v === 'true' || v === 'false' || v === 'null' || (v.trim() !== '' && Number.isFinite(Number(v))) ? `"${v}"` : v;
  return v === undefined ? '' : String(v);
}

function ruleFrom(g: GroupDraft, path: string, errors: Record<string, string>): AudienceRule {
  const conditions = g.conditions.map((c, i) => {
    const p = `${path}.conditions[${i}]`;
    if (c.kind === 'group') return ruleFrom(c, p, errors);
    if (c.kind === 'trait') {
      const out: TraitCondition = { kind: 'trait', trait: c.trait.trim(), op: c.op };
      if (TRAIT_OPS.find((o) => o.op === c.op)?.needsValue) out.value = parseValue(c.value);
      return out;
    }
    const count = Number(c.count);
    if (c.count.trim() === '' || !Number.isInteger(count) || count < 0) errors[`${p}.count`] = 'a whole number, 0 or more';
    const out: EventCondition = { kind: 'event', event: c.event.trim(), op: c.op, count };
    if (c.withinDays.trim() !== '') {
      const days = Number(c.withinDays);
      if (!Number.isFinite(days) || days <= 0) errors[`${p}.withinDays`] = 'a number of days above 0, or empty for all time';
      else out.withinDays = days;
    }
    return out;
  });
  return { combine: g.combine, conditions };
}

function computeFrom(c: ComputeDraft, errors: Record<string, string>): ComputedTraitDef {
  if (c.kind === 'last_property') return { kind: 'last_property', event: c.event.trim(), property: c.property.trim() };
  const out: ComputedTraitDef = { kind: 'event_count', event: c.event.trim() };
  if (c.withinDays.trim() !== '') {
    const days = Number(c.withinDays);
    if (!Number.isFinite(days) || days <= 0) errors['compute.withinDays'] = 'a number of days above 0, or empty for all time';
    else out.withinDays = days;
  }
  return out;
}

/** The definition part (what preview takes). */
export function definitionOf(d: AudienceDraft): { def: Pick<AudienceInput, 'type' | 'rule' | 'compute'>; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const def = d.type === 'audience' ? { type: d.type, rule: ruleFrom(d.rule, 'rule', errors) } : { type: d.type, compute: computeFrom(d.compute, errors) };
  return { def, errors };
}

export function audienceInputOf(d: AudienceDraft): { input: AudienceInput; errors: Record<string, string> } {
  const { def, errors } = definitionOf(d);
  const input: AudienceInput = { name: d.name, ...def, sourceIds: d.sourceIds };
  if (d.syncMinutes.trim() !== '') {
    const m = Number(d.syncMinutes);
    if (!Number.isFinite(m) || m <= 0) errors.syncIntervalMs = 'minutes above 0, or empty to sync only on demand';
    else input.syncIntervalMs = Math.round(m * 60_000);
  }
  return { input, errors };
}

/** A rule in words, for the list: `plan = "pro" and Order Completed ≥ 3 in 30 d`. */
export function describeRule(r: AudienceRule): string {
  return r.conditions
    .map((c) => {
      if ('conditions' in c) return `(${describeRule(c)})`;
      if (c.kind === 'trait') {
        const op = TRAIT_OPS.find((o) => o.op === c.op);
        return op?.needsValue ? `${c.trait} ${op.label} ${JSON.stringify(c.value)}` : `${c.trait} ${op?.label ?? c.op}`;
      }
      const op = EVENT_OPS.find((o) => o.op === c.op)?.label ?? c.op;
      return `${c.event} ${op} ${c.count}×${c.withinDays ? ` in ${c.withinDays} d` : ''}`;
    })
    .join(` ${r.combine} `);
}

export function describeCompute(c: ComputedTraitDef): string {
  return c.kind === 'event_count' ? `count of ${c.event}${c.withinDays ? ` in ${c.withinDays} d` : ''}` : `last ${c.property} of ${c.event}`;
}
