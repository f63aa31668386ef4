import type { RuleType, TrackingPlanRule } from './tracking-plan.schema';

// A draft tracking plan from observed calls (issue 24; Segment's "import events from source
// schema"): one rule per event (track), page or screen name, and identify/group, listing the
// properties (traits for identify and group) seen, each typed as observed; a property seen in
// every call of its rule is required. Top-level keys only: a nested object is typed "object".

const RULE_OF: Record<string, RuleType | undefined> = { track: 'TRACK', identify: 'IDENTIFY', group: 'GROUP', page: 'PAGE', screen: 'SCREEN' };

interface Acc {
  type: RuleType;
  key: string | null;
  part: 'properties' | 'traits';
  calls: number;
  props: Map<string, { types: Set<string>; seen: number }>;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v === 'object' ? 'object' : typeof v;
}

export function draftRules(calls: unknown[]): TrackingPlanRule[] {
  const rules = new Map<string, Acc>();
  for (const c of calls) {
    if (typeof c !== 'object' || c === null || Array.isArray(c)) continue;
    const call = c as Record<string, unknown>;
    const type = typeof call.type === 'string' ? RULE_OF[call.type] : undefined;
    if (!type) continue;
    const key = type === 'TRACK' ? (typeof call.event === 'string' && call.event ? call.event : null) : type === 'PAGE' || type === 'SCREEN' ? (typeof call.name === 'string' && call.name ? call.name : null) : null;
    if (type === 'TRACK' && key === null) continue;
    const part = type === 'IDENTIFY' || type === 'GROUP' ? 'traits' : 'properties';
    const id = `${type}\u0000${key ?? ''}`;
    let acc = rules.get(id);
    if (!acc) rules.set(id, (acc = { type, key, part, calls: 0, props: new Map() }));
    acc.calls++;
    const obj = call[part];
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) continue;
    for (const [k, v] of Object.entries(obj)) {
      let p = acc.props.get(k);
      if (!p) acc.props.set(k, (p = { types: new Set(), seen: 0 }));
      p.seen++;
      p.types.add(jsonType(v));
    }
  }
  return [...rules.values()]
    .sort((a, b) => a.type.localeCompare(b.type) || (a.key ?? '').localeCompare(b.key ?? ''))
    .map((acc) => {
      const properties: Record<string, unknown> = {};
      const required: string[] = [];
      for (const [k, p] of [...acc.props.entries()].sort(([a], [b]) => a.localeCompare(b))) {
        // An integer seen beside a fractional number is a number.
        const types = p.types.has('number') ? [...p.types].filter((t) => t !== 'integer') : [...p.types];
        types.sort();
        properties[k] = { type: types.length === 1 ? types[0] : types };
        if (p.seen === acc.calls) required.push(k);
      }
      const inner: Record<string, unknown> = { type: 'object', properties };
      if (required.length) inner.required = required;
      const jsonSchema: Record<string, unknown> = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { [acc.part]: inner } };
      // A required property is required of the call too: without this a call leaving out the whole
      // object would pass (JSON Schema checks `properties.x.required` only when x is there).
      if (required.length) jsonSchema.required = [acc.part];
      const rule: TrackingPlanRule = { type: acc.type, version: 1, jsonSchema };
      if (acc.key !== null) rule.key = acc.key;
      return rule;
    });
}
