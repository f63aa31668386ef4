// The inputs of the seeded config and audience-rule fuzz (tests/integration/config-fuzz.test.ts),
// generated up front from the seed alone, so the same seed always makes the same inputs. A config
// starts as a plausible one (names, keys, paths and audiences that may clash with what the lab
// already stores) and is then spoiled as text: values of the wrong type, hostile keys, keys given
// twice, nesting around and far past the limit, broken JSON, odd numbers and strings.

import { mulberry32 } from '../../src/main/engine/seeded-random';
import { MAX_INPUT_DEPTH } from '../../src/shared/nesting';
import { FuzzDraws } from './fuzz-draws';

export interface FuzzInput {
  n: number;
  /** What was generated, for the failure message. */
  kind: string;
  /** The JSON text (or not quite JSON) sent or written. */
  text: string;
}

/** What the lab under test already holds, so generated configs can clash with it. */
export const FUZZ_BASE = {
  source: { name: 'base', writeKey: 'wk_fuzz_base' },
  receiver: { name: 'base-receiver', path: '/base-receiver' },
  audience: 'Base Audience',
};

const WEIRD = ['null', 'true', 'false', '0', '-1', '1e400', '-0', '0.5', '123456789012345678901234567890', '""', '" "', '"\\u0000"', '"\\ud800"', '[]', '[null]', '{}', '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"x":1}}}', '"x".repeat'];
const HOSTILE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', ' ', '\u0000', '$schema', 'sources ', 'Sources'];
const OPS = ['eq', 'neq', 'exists', 'not_exists', 'gt', 'gte', 'lt', 'lte', 'contains', 'like', ''];

class Gen extends FuzzDraws {
  name(prefix: string): string {
    // A small pool, so names repeat within a config and across configs (matched by name).
    return this.pick([`${prefix}-a`, `${prefix}-b`, `${prefix}-c`, `${prefix} ${this.int(0, 3)}`, 'Ünïcødé ✓', FUZZ_BASE.source.name]);
  }

  condition(depth: number): unknown {
    if (depth > 0 && this.chance(0.3)) return this.rule(depth - 1);
    if (this.chance(0.5)) {
      const c: Record<string, unknown> = { kind: 'trait', trait: this.pick(['plan', 'address.city', 'n', 'a.b.c', 'plan', '']), op: this.chance(0.9) ? this.pick(OPS.slice(0, 9)) : this.pick(OPS) };
      if (this.chance(0.7)) c.value = this.pick(['pro', 3, true, null, 'x'.repeat(this.int(0, 300))]);
      return c;
    }
    const valid = this.chance(0.85);
    const c: Record<string, unknown> = valid
      ? { kind: 'event', event: this.pick(['Order Completed', 'E']), op: this.pick(['gte', 'lte', 'eq']), count: this.pick([0, 3, 1e9]) }
      : { kind: this.pick(['Event', 'trait', 'event']), event: this.pick(['', 'E']), op: this.pick(['gt', 'gte']), count: this.pick([-1, 2.5]) };
    if (this.chance(0.4)) c.withinDays = valid ? this.pick([1, 30, 0.5, 3650]) : this.pick([0, 3651, -2]);
    return c;
  }

  rule(depth: number): unknown {
    const n = this.chance(0.05) ? this.pick([0, 51, 60]) : this.int(1, 3);
    return { combine: this.chance(0.95) ? this.pick(['and', 'or']) : 'xor', conditions: Array.from({ length: n }, () => this.condition(depth)) };
  }

  /** A rule nested `levels` rules deep (2 JSON levels each), as text. */
  deepRule(levels: number): string {
    return '{"combine":"and","conditions":['.repeat(levels) + '{"kind":"trait","trait":"plan","op":"exists"}' + ']}'.repeat(levels);
  }

  config(): Record<string, unknown> {
    const c: Record<string, unknown> = {};
    if (this.chance(0.8)) {
      c.sources = Array.from({ length: this.int(0, 4) }, () => {
        const s: Record<string, unknown> = { name: this.name('fz') };
        if (this.chance(0.6)) s.writeKey = this.pick(['wk_fz_1', 'wk_fz_2', FUZZ_BASE.source.writeKey, `wk_${this.int(0, 9)}`, '', 'short']);
        if (this.chance(0.4)) {
          s.webhooks = {
            enabled: this.chance(0.6),
            sharedSecret: this.pick(['s3cret', '', undefined]),
            urls: Array.from({ length: this.int(0, 6) }, () => ({
              // Issue 26: a mock receiver by name (in the file, stored, missing, empty), now and then beside a url (refused).
              ...(this.chance(0.25)
                ? { mockReceiver: this.pick(['fz-recv-a', FUZZ_BASE.receiver.name, 'missing-recv', '']), ...(this.chance(0.1) ? { url: 'http://127.0.0.1:9/hook' } : {}) }
                : { url: this.pick(['http://127.0.0.1:9/hook', 'ftp://x', 'not a url', `http://127.0.0.1:9/${'p'.repeat(this.int(0, 3000))}`]) }),
              headers: this.pick([{}, { 'X-Env': 'qa' }, { Expect: '100-continue' }, { 'Bad Name': 'v' }]),
            })),
          };
        }
        if (this.chance(0.2)) s.collectorFaults = this.pick([null, { rate: 0.5, mode: 'status' }, { rate: 2, mode: 'delay' }, { rate: 0.1, mode: 'delay', delayMs: 10 }]);
        // Tracking plans (issue 24): a connection to a plan in the file, stored, or missing; odd settings.
        if (this.chance(0.15)) s.trackingPlan = this.pick([null, { name: 'fz-plan' }, { name: 'missing-plan' }, { name: 'fz-plan', unplannedEvents: 'block', unplannedProperties: 'omit', violations: 'block' }, { name: 'fz-plan', violations: 'drop' }]);
        return s;
      });
    }
    if (this.chance(0.4)) c.settings = this.pick([{ timeScale: this.pick([1, 5, 0, -1, 1e9]) }, { payloadFormat: this.pick(['full', 'documented', 'other']) }, { retrySchedule: { preset: this.pick(['default', 'svix', 'custom', 'nope']) } }, { retentionCalls: this.pick([200000, 0, 1.5]) }]);
    if (this.chance(0.4)) {
      c.mockReceivers = Array.from({ length: this.int(0, 3) }, () => {
        const r: Record<string, unknown> = { name: this.pick(['fz-recv-a', 'fz-recv-b', FUZZ_BASE.receiver.name]), path: this.pick(['/fz-a', '/fz-b', FUZZ_BASE.receiver.path, 'no-slash', '/']) };
        if (this.chance(0.3)) r.behavior = this.pick([{ status: 500 }, { failFirst: 2, status: 503 }, { status: 99 }, { latencyMs: -1 }]);
        return r;
      });
    }
    if (this.chance(0.5)) {
      c.audiences = Array.from({ length: this.int(0, 3) }, () => {
        const a: Record<string, unknown> = { name: this.pick(['FZ Pro', 'fz-pro', FUZZ_BASE.audience, 'base audience', '']), sources: this.pick([[FUZZ_BASE.source.name], ['fz-a'], ['missing'], [], ['fz-a', 'fz-b']]) };
        if (this.chance(0.85)) a.rule = this.rule(this.int(0, 5));
        if (this.chance(0.15)) a.type = this.pick(['audience', 'computed_trait', 'other']);
        if (this.chance(0.1)) a.compute = { kind: 'event_count', event: 'E' };
        return a;
      });
    }
    if (this.chance(0.3)) c.trackingPlans = Array.from({ length: this.int(0, 2) }, () => ({ name: this.pick(['fz-plan', 'fz-plan', '']), rules: Array.from({ length: this.int(0, 4) }, () => this.planRule()) }));
    return c;
  }

  /** A tracking plan rule: plausible, or one a plan must refuse (a schema that does not compile, a pattern RE2 cannot run, one that would backtrack exponentially in JavaScript, nested too deep, no key). */
  planRule(): Record<string, unknown> {
    const props = (p: Record<string, unknown>) => ({ type: 'object', properties: { properties: { type: 'object', properties: p } } });
    let deep: Record<string, unknown> = { type: 'object' };
    for (let i = 0, n = this.int(60, 80); i < n; i++) deep = { properties: { x: deep } };
    // 1.7 KB that would run 2^n subschemas on a call (each step refers to the one before twice).
    const definitions: Record<string, unknown> = { d0: { type: 'string' } };
    const steps = this.int(18, 24);
    for (let k = 1; k <= steps; k++) definitions[`d${k}`] = { anyOf: [{ $ref: `#/definitions/d${k - 1}` }, { $ref: `#/definitions/d${k - 1}` }] };
    return this.pick([
      { type: 'TRACK', key: `E${this.int(0, 3)}`, version: this.int(1, 2), jsonSchema: props({ n: { type: 'number' } }) },
      { type: 'IDENTIFY', version: 1, jsonSchema: { type: 'object', properties: { traits: { type: 'object', required: ['email'] } } } },
      { type: 'TRACK', key: 'Bad', version: 1, jsonSchema: props({ n: { type: 'nope' } }) },
      { type: 'TRACK', key: 'Nested', version: 1, jsonSchema: props({ s: { type: 'string', pattern: '^(a+)+$' } }) },
      { type: 'TRACK', key: 'Lookahead', version: 1, jsonSchema: props({ s: { type: 'string', pattern: '^(?=a)a$' } }) },
      { type: 'TRACK', key: 'BadRegex', version: 1, jsonSchema: props({ s: { type: 'string', pattern: '(' } }) },
      { type: 'TRACK', key: 'Explode', version: 1, jsonSchema: { definitions, ...props({ s: { $ref: `#/definitions/d${steps}` } }) } },
      { type: 'TRACK', key: 'Recursive', version: 1, jsonSchema: props({ s: { $ref: '#' } }) },
      { type: 'TRACK', key: 'Async', version: 1, jsonSchema: { $async: true, ...props({ s: { type: 'string' } }) } },
      { type: 'TRACK', key: 'Deep', version: 1, jsonSchema: deep },
      { type: 'TRACK', version: 1, jsonSchema: {} },
      { type: 'PAGE', key: 'Home', version: 0, jsonSchema: 'not a schema' },
    ]);
  }
}

/** Replaces the value of the first `"key":` member found after a random point, as text. */
function setSomewhere(g: Gen, text: string, value: string): string {
  const keys = [...text.matchAll(/"([^"\\]*)":/g)];
  if (keys.length === 0) return text;
  const m = g.pick(keys);
  const start = m.index! + m[0].length;
  const end = valueEnd(text, start);
  return text.slice(0, start) + value + text.slice(end);
}

/** Where the JSON value starting at `i` ends (a scanner over strings and brackets, no recursion). */
function valueEnd(text: string, i: number): number {
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const ch = text[j];
    if (ch === '"') {
      for (j++; j < text.length && text[j] !== '"'; j++) if (text[j] === '\\') j++;
      if (depth === 0) return j + 1;
    } else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') {
      if (depth === 0) return j;
      if (--depth === 0) return j + 1;
    } else if (depth === 0 && ch === ',') return j;
  }
  return text.length;
}

/** Adds a member `"key": value` at the start of a random object in the text. */
function addMember(g: Gen, text: string, key: string, value: string): string {
  const opens = [...text.matchAll(/\{/g)];
  if (opens.length === 0) return text;
  const at = g.pick(opens).index! + 1;
  const empty = text[at] === '}';
  return `${text.slice(0, at)}${JSON.stringify(key)}:${value}${empty ? '' : ','}${text.slice(at)}`;
}

/** `count` configs as JSON text, each plausible and then perhaps spoiled. */
export function generateConfigs(seed: number, count: number): FuzzInput[] {
  const g = new Gen(mulberry32(seed));
  const out: FuzzInput[] = [];
  const kinds: [number, () => [string, string]][] = [
    [20, () => ['plausible', JSON.stringify(g.config())]],
    [14, () => ['wrong type', setSomewhere(g, JSON.stringify(g.config()), g.pick(WEIRD))]],
    [8, () => ['hostile key', addMember(g, JSON.stringify(g.config()), g.pick(HOSTILE_KEYS), g.pick(WEIRD))]],
    [8, () => {
      const text = JSON.stringify(g.config());
      const m = g.pick([...text.matchAll(/"([^"\\]*)":/g)]);
      return ['duplicate key', m ? addMember(g, text, m[1], g.pick(WEIRD)) : text];
    }],
    [8, () => ['deep rule', `{"sources":[{"name":"${FUZZ_BASE.source.name}"}],"audiences":[{"name":"Deep","sources":["${FUZZ_BASE.source.name}"],"rule":${g.deepRule(g.pick([g.int(30, 40), g.int(1_000, 50_000)]))}}]}`]],
    [6, () => {
      const d = g.pick([MAX_INPUT_DEPTH - 3, MAX_INPUT_DEPTH, g.int(100, 100_000)]);
      return ['deep value', setSomewhere(g, JSON.stringify(g.config()), '['.repeat(d) + '1' + ']'.repeat(d))];
    }],
    [8, () => {
      const text = JSON.stringify(g.config());
      const cut = g.int(0, text.length);
      return ['bad json', g.pick([text.slice(0, cut), `${text.slice(0, cut)},${text.slice(cut)}`, text.replace(/"/, "'"), `${text}}`, `\ufeff${text}`, '', 'null', '[]', '"config"'])];
    }],
    [4, () => ['many', JSON.stringify({ sources: Array.from({ length: g.pick([100, 1_000, 2_000]) }, (_, i) => ({ name: `bulk-${i}` })) })]],
    [4, () => ['long strings', setSomewhere(g, JSON.stringify(g.config()), JSON.stringify(g.pick(['x'.repeat(g.int(1_000, 200_000)), '\u202e\u0000\ud83d', '𝕏'.repeat(5_000)])))]],
  ];
  const total = kinds.reduce((n, [w]) => n + w, 0);
  for (let n = 0; n < count; n++) {
    let w = g.int(0, total - 1);
    const [, make] = kinds.find(([weight]) => (w -= weight) < 0)!;
    const [kind, text] = make();
    out.push({ n, kind, text });
  }
  return out;
}

export interface RuleInput extends FuzzInput {
  op: 'previewAudience' | 'createAudience' | 'updateAudience';
}

/** `count` audience rule requests (preview, create, update) as JSON text. */
export function generateRuleInputs(seed: number, count: number, sourceId: string): RuleInput[] {
  const g = new Gen(mulberry32(seed ^ 0x5eed));
  const out: RuleInput[] = [];
  for (let n = 0; n < count; n++) {
    const op = g.pick(['previewAudience', 'createAudience', 'updateAudience'] as const);
    const pick = g.int(0, 9);
    let rule: string;
    let kind: string;
    if (pick < 4) [kind, rule] = ['plausible', JSON.stringify(g.rule(g.int(0, 6)))];
    else if (pick < 6) [kind, rule] = ['wrong type', setSomewhere(g, JSON.stringify(g.rule(g.int(0, 4))), g.pick(WEIRD))];
    else if (pick < 8) [kind, rule] = ['deep', g.deepRule(g.pick([g.int(30, 40), g.int(40, 100_000)]))];
    else if (pick < 9) [kind, rule] = ['wide', JSON.stringify({ combine: 'or', conditions: Array.from({ length: 50 }, () => ({ combine: 'and', conditions: Array.from({ length: 50 }, () => g.condition(0)) })) })];
    else [kind, rule] = ['hostile key', addMember(g, JSON.stringify(g.rule(2)), g.pick(HOSTILE_KEYS), g.pick(WEIRD))];
    const body: Record<string, string> = { rule };
    if (op === 'createAudience') Object.assign(body, { name: JSON.stringify(g.pick(['FZ Rule', `fz rule ${g.int(0, 20)}`, FUZZ_BASE.audience, ''])), sourceIds: JSON.stringify(g.pick([[sourceId], ['nope'], []])) });
    if (op === 'updateAudience' && g.chance(0.3)) body.name = JSON.stringify(g.pick(['Renamed', FUZZ_BASE.audience, '']));
    out.push({ n, kind, op, text: `{${Object.entries(body).map(([k, v]) => `"${k}":${v}`).join(',')}}` });
  }
  return out;
}
