import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCall, compilePlan, selectRules, describeErrors, PlanCompiler, RuleCompileError } from '../../src/main/engine/tracking-plans/check';
import { compileRule, withoutIdKeywords } from '../../src/main/engine/tracking-plans/compile';
import { toRe2Syntax } from '../../src/main/engine/tracking-plans/linear-pattern';
import { importTrackingPlan } from '../../src/shared/tracking-plan-import';
import { ruleId, trackingPlanRulesSchema, withoutOmitted, type TrackingPlanRule } from '../../src/shared/tracking-plan.schema';
import { draftRules } from '../../src/shared/tracking-plan-draft';

// Tracking plans (issue 24): which rules a call is checked against, how Ajv's findings read, the
// shapes of Segment's plan files (Typewriter's own test plans as fixtures), and the draft plan.

const FIXTURES = join(__dirname, '..', 'fixtures', 'tracking-plans');
const fixture = (name: string): unknown => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));

const props = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object',
  properties: { properties: { type: 'object', properties, ...(required.length ? { required } : {}) } },
});
const track = (key: string, version = 1, schema: Record<string, unknown> = props({})): TrackingPlanRule => ({ type: 'TRACK', key, version, jsonSchema: schema });
const ALLOW = { unplannedEvents: 'allow', unplannedProperties: 'allow', violations: 'allow' } as const;

describe('rule selection', () => {
  const plan = compilePlan('p', 'shop', [
    { type: 'COMMON', version: 1, jsonSchema: { type: 'object', required: ['userId'] } },
    track('Order Completed', 1),
    track('Order Completed', 2),
    { type: 'PAGE', version: 1, jsonSchema: { type: 'object' } },
    { type: 'PAGE', key: 'Home', version: 1, jsonSchema: { type: 'object' } },
    { type: 'IDENTIFY', version: 1, jsonSchema: { type: 'object' } },
  ]);
  const chosen = (call: Parameters<typeof selectRules>[1]) => {
    const r = selectRules(plan, call);
    return { rules: r.rules.map((c) => `${c.rule.type}:${c.rule.key ?? ''}:${c.rule.version}`), unplanned: r.unplanned };
  };

  it('a track call gets COMMON and the newest version of its event; an event the plan lacks is unplanned', () => {
    expect(chosen({ type: 'track', event: 'Order Completed' })).toEqual({ rules: ['COMMON::1', 'TRACK:Order Completed:2'], unplanned: false });
    expect(chosen({ type: 'track', event: 'Order Refunded' })).toEqual({ rules: ['COMMON::1'], unplanned: true });
  });

  it('context.protocols.event_version picks an older version when the plan has it (else the newest)', () => {
    expect(chosen({ type: 'track', event: 'Order Completed', context: { protocols: { event_version: 1 } } }).rules).toEqual(['COMMON::1', 'TRACK:Order Completed:1']);
    expect(chosen({ type: 'track', event: 'Order Completed', context: { protocols: { event_version: 7 } } }).rules).toEqual(['COMMON::1', 'TRACK:Order Completed:2']);
  });

  it('a page by its name, else the unkeyed PAGE rule; identify its rule; alias only COMMON; none of them unplanned', () => {
    expect(chosen({ type: 'page', name: 'Home' })).toEqual({ rules: ['COMMON::1', 'PAGE:Home:1'], unplanned: false });
    expect(chosen({ type: 'page', name: 'Pricing' })).toEqual({ rules: ['COMMON::1', 'PAGE::1'], unplanned: false });
    expect(chosen({ type: 'identify' })).toEqual({ rules: ['COMMON::1', 'IDENTIFY::1'], unplanned: false });
    expect(chosen({ type: 'alias' })).toEqual({ rules: ['COMMON::1'], unplanned: false });
    expect(chosen({ type: 'screen', name: 'X' })).toEqual({ rules: ['COMMON::1'], unplanned: false });
  });
});

describe('choices kept, clean verdicts shared (issue 38: a plan costs the collector less per call)', () => {
  const rule = track('Signed Up', 1, props({ plan: { enum: ['free', 'pro'] } }, ['plan']));

  it('clean calls of one event share a frozen verdict; a call with a finding gets its own', () => {
    const plan = compilePlan('p', 'shop', [rule]);
    const a = checkCall(plan, ALLOW, { type: 'track', event: 'Signed Up', properties: { plan: 'pro' } });
    const b = checkCall(plan, ALLOW, { type: 'track', event: 'Signed Up', properties: { plan: 'free' } });
    expect(b).toBe(a);
    expect(a).toEqual({ planId: 'p', violations: [], blocked: null, omitted: [], rules: [ruleId(rule)] });
    expect(Object.isFrozen(a) && Object.isFrozen(a.violations) && Object.isFrozen(a.rules)).toBe(true);
    expect(() => a.violations.push({ kind: 'schema', path: '', message: 'x', rule: null })).toThrow(TypeError);
    const bad = checkCall(plan, ALLOW, { type: 'track', event: 'Signed Up', properties: { plan: 'gold' } });
    expect(bad).not.toBe(a);
    expect(bad.violations).toHaveLength(1);
    // Omitting unplanned properties: a call with one gets its own verdict, one without the shared one.
    const omit = { ...ALLOW, unplannedProperties: 'omit' } as const;
    expect(checkCall(plan, omit, { type: 'track', event: 'Signed Up', properties: { plan: 'pro', extra: 1 } }).omitted).toEqual(['/properties/extra']);
    expect(checkCall(plan, omit, { type: 'track', event: 'Signed Up', properties: { plan: 'pro' } })).toBe(a);
  });

  it('the same event gets the same choice; unplanned events and asked versions are chosen anew, and a rule added clears what was kept', () => {
    const plan = compilePlan('p', 'shop', [rule]);
    expect(selectRules(plan, { type: 'track', event: 'Signed Up' })).toBe(selectRules(plan, { type: 'track', event: 'Signed Up' }));
    expect(selectRules(plan, { type: 'track', event: 'Made Up 1' })).not.toBe(selectRules(plan, { type: 'track', event: 'Made Up 1' }));
    const asked = { type: 'track', event: 'Signed Up', context: { protocols: { event_version: 1 } } };
    expect(selectRules(plan, asked)).not.toBe(selectRules(plan, asked));
    // Names and types a sender makes up add nothing: what is kept is bounded by the plan's rules.
    for (let i = 0; i < 5_000; i++) selectRules(plan, { type: 'track', event: `Made Up ${i}` });
    for (let i = 0; i < 5_000; i++) selectRules(plan, { type: 'page', name: `Page ${i}` });
    for (let i = 0; i < 5_000; i++) selectRules(plan, { type: `type${i}` });
    selectRules(plan, { type: '__proto__' });
    expect([...plan.choices.values()].reduce((n, m) => n + m.size, 0)).toBe(3);
    expect(selectRules(plan, { type: 'page', name: 'Page 1' })).toBe(selectRules(plan, { type: 'page' }));
    expect(selectRules(plan, { type: 'track', event: 'Signed Up' })).toBe(selectRules(plan, { type: 'track', event: 'Signed Up' }));
    const compiler = new PlanCompiler('q', 'shop', [rule, track('Order Completed')]);
    compiler.step();
    expect(selectRules(compiler.plan, { type: 'track', event: 'Order Completed' }).unplanned).toBe(true);
    compiler.step();
    expect(selectRules(compiler.plan, { type: 'track', event: 'Order Completed' }).unplanned).toBe(false);
    const before = selectRules(compiler.plan, { type: 'track', event: 'Signed Up' });
    expect(selectRules(compiler.plan, { type: 'track', event: 'Signed Up' })).toBe(before);
  });
});

describe('messages and kinds', () => {
  const rule = track('Signed Up', 1, {
    type: 'object',
    properties: {
      properties: {
        type: 'object',
        properties: { plan: { enum: ['free', 'pro'] }, seats: { type: 'integer', minimum: 1 } },
        required: ['plan'],
        additionalProperties: false,
      },
    },
  });
  const plan = compilePlan('p', 'shop', [rule]);

  it('each Ajv error is one violation: kind, JSON pointer, Segment-worded message, value', () => {
    const v = checkCall(plan, ALLOW, { type: 'track', event: 'Signed Up', properties: { seats: 0, 'utm/source': 'x' } }).violations;
    expect(v.map((x) => ({ kind: x.kind, path: x.path, value: x.value }))).toEqual([
      { kind: 'required_missing', path: '/properties/plan', value: undefined },
      { kind: 'unplanned_property', path: '/properties/utm~1source', value: 'x' },
      { kind: 'schema', path: '/properties/seats', value: 0 },
    ]);
    expect(v.map((x) => x.message)).toEqual([
      "The value at /properties is missing the required field 'plan'.",
      'The value at /properties has an unexpected property, utm/source, which is not in the list of allowed properties (plan, seats).',
      'The value at /properties/seats must be equal to or greater than 1.',
    ]);
  });

  it('a wrong type and an enum read as people would say them', () => {
    const v = checkCall(plan, ALLOW, { type: 'track', event: 'Signed Up', properties: { plan: 'gold', seats: '3' } }).violations;
    expect(v.map((x) => [x.kind, x.message])).toEqual([
      ['schema', 'The value at /properties/plan must be one of: "free" or "pro".'],
      ['wrong_type', 'The value at /properties/seats must be an integer but it was a string.'],
    ]);
  });

  it('describeErrors keeps the order Ajv reports and names the missing property in the pointer', () => {
    const c = compileRule({ type: 'COMMON', version: 1, jsonSchema: { type: 'object', required: ['a/b'] } });
    expect(c.validate({})).toBe(false);
    expect(describeErrors(c.validate.errors!, {})).toEqual([{ kind: 'required_missing', path: '/a~1b', message: "The root value is missing the required field 'a/b'." }]);
  });
});

describe('enforcement', () => {
  const plan = compilePlan('p', 'shop', [track('Order Completed', 1, props({ total: { type: 'number' } }, ['total']))]);

  it('block on unplanned events names the event; block on violations names the first; omit lists what is left out', () => {
    expect(checkCall(plan, { ...ALLOW, unplannedEvents: 'block' }, { type: 'track', event: 'X' }).blocked).toBe('unplanned event "X"');
    expect(checkCall(plan, { ...ALLOW, violations: 'block' }, { type: 'track', event: 'X' }).blocked).toBeNull();
    expect(checkCall(plan, { ...ALLOW, violations: 'block' }, { type: 'track', event: 'Order Completed', properties: {} }).blocked).toBe(
      "The value at /properties is missing the required field 'total'.",
    );
    const omit = checkCall(plan, { ...ALLOW, unplannedProperties: 'omit', violations: 'block' }, { type: 'track', event: 'Order Completed', properties: { total: 1, coupon: 'A' } });
    expect(omit).toMatchObject({ blocked: null, omitted: ['/properties/coupon'] });
    expect(withoutOmitted({ type: 'track', properties: { total: 1, coupon: 'A' } }, omit.omitted)).toEqual({ type: 'track', properties: { total: 1 } });
  });

  it('at most 50 violations are kept per call', () => {
    const many = compilePlan('p', 'p', [track('E', 1, props(Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`p${i}`, { type: 'number' }]))))]);
    const call = { type: 'track', event: 'E', properties: Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`p${i}`, 'x'])) };
    expect(checkCall(many, ALLOW, call).violations).toHaveLength(50);
  });
});

describe('compiling', () => {
  it('a schema that does not compile names its rule and Ajv\'s reason', () => {
    expect(() => compilePlan('p', 'p', [track('A'), track('B', 1, { type: 'object', properties: { x: { type: 'nope' } } })])).toThrow(RuleCompileError);
    try {
      compilePlan('p', 'p', [track('A'), track('B', 1, { type: 'object', properties: { x: { type: 'nope' } } })]);
    } catch (err) {
      expect((err as RuleCompileError).index).toBe(1);
      expect((err as Error).message).toMatch(/^rule TRACK "B" version 1: its JSON Schema does not compile: .*type/);
    }
  });

  it('draft-04 schemas compile with ajv-draft-04 (exclusiveMinimum as a boolean, id as the id keyword)', () => {
    const rule = track('Old', 1, {
      $schema: 'http://json-schema.org/draft-04/schema#',
      id: 'old-plan',
      type: 'object',
      properties: { properties: { type: 'object', properties: { n: { type: 'number', minimum: 0, exclusiveMinimum: true } } } },
    });
    const plan = compilePlan('p', 'p', [rule]);
    expect(checkCall(plan, ALLOW, { type: 'track', event: 'Old', properties: { n: 0 } }).violations.map((v) => v.path)).toEqual(['/properties/n']);
    expect(checkCall(plan, ALLOW, { type: 'track', event: 'Old', properties: { n: 1 } }).violations).toEqual([]);
  });

  it('string `id` keywords are dropped for draft-07 where a schema stands, never a property named id', () => {
    expect(withoutIdKeywords({ id: '/x', type: 'object', properties: { id: { id: '/properties/id', type: 'string' } }, items: [{ id: 'i' }] })).toEqual({
      type: 'object',
      properties: { id: { type: 'string' } },
      items: [{}],
    });
  });

  it('a 1,000-rule plan compiles whole: each rule judges its own event', () => {
    // How long it takes is a figure of `npm run bench` (restart, "with a 1,000-rule plan connected"),
    // never a test's assertion: machines of this kind differ 3× in speed (issue 44).
    const rules = Array.from({ length: 1000 }, (_, i) => track(`Event ${i}`, 1, props({ a: { type: 'string' }, b: { type: 'number' }, [`p${i}`]: { type: 'string', maxLength: i + 1 } }, ['a'])));
    const plan = compilePlan('p', 'big', rules);
    expect(checkCall(plan, ALLOW, { type: 'track', event: 'Event 999', properties: { a: 'x', p999: 'y'.repeat(1000) } }).violations).toEqual([]);
    expect(checkCall(plan, ALLOW, { type: 'track', event: 'Event 0', properties: { a: 'x', p0: 'yy' } }).violations.map((v) => v.path)).toEqual(['/properties/p0']);
    expect(checkCall(plan, ALLOW, { type: 'track', event: 'Event 500', properties: { b: 1 } }).violations.map((v) => v.kind)).toEqual(['required_missing']);
  });
});

describe('importing plan files', () => {
  it("Typewriter v8's plan.json: each TRACK rule wrapped back under properties.properties, and every rule compiles", () => {
    const read = importTrackingPlan(fixture('typewriter-v8-plan.json'));
    expect(read.shape).toBe('typewriter-v8');
    expect(read.name).toBe('Typewriter E2E');
    const rules = trackingPlanRulesSchema.parse(read.rules);
    expect(rules).toHaveLength(25);
    const plan = compilePlan('p', 'tw', rules);
    const bad = checkCall(plan, ALLOW, { type: 'track', event: 'Custom Violation Handler', properties: { 'regex property': 'Rick' } });
    expect(bad.violations.map((v) => [v.kind, v.path])).toEqual([['schema', '/properties/regex property']]);
    expect(checkCall(plan, ALLOW, { type: 'track', event: 'Custom Violation Handler', properties: { 'regex property': 'Evil Morty' } }).violations).toEqual([]);
    // Leaving out `properties` altogether does not pass a rule that requires some.
    expect(checkCall(plan, ALLOW, { type: 'track', event: 'Custom Violation Handler' }).violations.map((v) => [v.kind, v.path])).toEqual([['required_missing', '/properties']]);
    const missing = checkCall(plan, ALLOW, { type: 'track', event: 'Every Required Type', properties: {} }).violations;
    expect(missing.length).toBeGreaterThan(5);
    expect(missing.every((v) => v.kind === 'required_missing')).toBe(true);
  });

  it("Typewriter v7's rules.events[]: TRACK rules with their whole-call schemas, named by display_name", () => {
    const read = importTrackingPlan(fixture('typewriter-v7-plan.json'));
    expect(read.shape).toBe('typewriter-v7');
    expect(read.name).toBe('Typewriter E2E');
    const rules = trackingPlanRulesSchema.parse(read.rules);
    expect(rules.every((r) => r.type === 'TRACK')).toBe(true);
    compilePlan('p', 'tw7', rules);
  });

  it('Public API rules (bare, under rules, or the saved answer under data) are kept as they are', () => {
    const rules = [{ type: 'TRACK', key: 'A', version: 2, jsonSchema: { type: 'object' } }, { type: 'IDENTIFY', key: null, version: 1, jsonSchema: {} }];
    const expected = [{ type: 'TRACK', key: 'A', version: 2, jsonSchema: { type: 'object' } }, { type: 'IDENTIFY', version: 1, jsonSchema: {} }];
    expect(importTrackingPlan(rules)).toEqual({ name: null, shape: 'segment-public-api', rules: expected });
    expect(importTrackingPlan({ name: 'web', rules })).toEqual({ name: 'web', shape: 'segment-public-api', rules: expected });
    expect(importTrackingPlan({ data: { rules } }).rules).toEqual(expected);
  });

  it('a file of another shape is refused saying what was expected', () => {
    expect(() => importTrackingPlan({ events: [] })).toThrow(/no rules: expected "rules"/);
    expect(() => importTrackingPlan('x')).toThrow(/JSON object/);
    expect(() => importTrackingPlan({ rules: { events: [{ rules: {} }] } })).toThrow(/rules.events\[0\].name/);
  });
});

describe('draft plan from calls', () => {
  it('one rule per event, page name and identify; properties typed as seen; required when in every call', () => {
    const rules = draftRules([
      { type: 'track', event: 'Order Completed', properties: { total: 10, currency: 'EUR' } },
      { type: 'track', event: 'Order Completed', properties: { total: 10.5, coupon: null } },
      { type: 'identify', traits: { email: 'a@b.c', age: 3 } },
      { type: 'page', name: 'Home', properties: { path: '/' } },
      { type: 'alias', previousId: 'x' },
      'junk',
    ]);
    expect(rules.map((r) => `${r.type}:${r.key ?? ''}`)).toEqual(['IDENTIFY:', 'PAGE:Home', 'TRACK:Order Completed']);
    expect(rules[2]!.jsonSchema).toEqual({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { properties: { type: 'object', properties: { coupon: { type: 'null' }, currency: { type: 'string' }, total: { type: 'number' } }, required: ['total'] } },
      // Its required property is required of the call: a call with no properties at all does not pass.
      required: ['properties'],
    });
    expect(rules[0]!.jsonSchema.properties).toEqual({ traits: { type: 'object', properties: { age: { type: 'integer' }, email: { type: 'string' } }, required: ['age', 'email'] } });
    // A draft checks the calls it came from without a violation.
    const plan = compilePlan('d', 'draft', trackingPlanRulesSchema.parse(rules));
    expect(checkCall(plan, ALLOW, { type: 'track', event: 'Order Completed', properties: { total: 10, currency: 'EUR' } }).violations).toEqual([]);
    expect(checkCall(plan, ALLOW, { type: 'track', event: 'Order Completed' }).violations.map((v) => v.kind)).toEqual(['required_missing']);
  });
});

describe('bounds on what a plan may hold', () => {
  const issues = (input: unknown) => {
    const r = trackingPlanRulesSchema.safeParse(input);
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('a schema nested past 64 levels, over 256 KB, or a plan over 2,000 rules is refused naming it', () => {
    let deep: Record<string, unknown> = { type: 'object' };
    for (let i = 0; i < 70; i++) deep = { type: 'object', properties: { x: deep } };
    expect(issues([track('Deep', 1, deep)])).toEqual(['0.jsonSchema: nests deeper than 64 levels']);
    const huge = props(Object.fromEntries(Array.from({ length: 9000 }, (_, i) => [`property_${i}`, { type: 'string', description: 'x'.repeat(10) }])));
    expect(issues([track('Huge', 1, huge)])).toEqual(['0.jsonSchema: is over 256 KB of JSON']);
    expect(issues(Array.from({ length: 2001 }, (_, i) => track(`E${i}`)))[0]).toMatch(/^: Too big: expected array to have <=2000 items/);
  });

  it('a TRACK rule needs a key, an IDENTIFY rule has none, and a rule is not given twice', () => {
    expect(issues([{ type: 'TRACK', version: 1, jsonSchema: {} }])).toEqual(['0.key: a TRACK rule needs a key (the event name)']);
    expect(issues([{ type: 'IDENTIFY', key: 'x', version: 1, jsonSchema: {} }])).toEqual(['0.key: a IDENTIFY rule has no key']);
    expect(issues([track('A'), track('A')])).toEqual(['1: duplicate rule TRACK "A" version 1']);
  });
});

describe('patterns that could stall the collector', () => {
  const stringRule = (pattern: string) => compileRule(track('R', 1, props({ x: { type: 'string', pattern } })));
  const check = (pattern: string, x: string) => stringRule(pattern).validate({ type: 'track', event: 'R', properties: { x } });

  it('patterns that backtrack exponentially in JavaScript are matched in linear time, with the same answers', () => {
    // Each of these takes seconds or longer in a backtracking engine on a string of a few dozen characters.
    const evil = 'a'.repeat(5000) + '!';
    for (const p of ['^(a+)+$', '^(a|a)*$', '^(a|aa)+$', '^(\\w*\\s?)*x$', '^(?:a*)*b$', '(a+){2,100}$']) {
      // A backtracking engine would not return before the test's timeout.
      expect(check(p, evil), p).toBe(false);
    }
    expect(check('^(a+)+$', 'aaaa')).toBe(true);
    // patternProperties go through the same engine.
    const keys = compileRule({ type: 'COMMON', version: 1, jsonSchema: { type: 'object', patternProperties: { '^(a*)*$': { type: 'string' } } } });
    expect(keys.validate({ aaaa: 'x' })).toBe(true);
    expect(keys.validate({ aaaa: 1 })).toBe(false);
  });

  it('a pattern RE2 cannot run (lookahead, backreference) is refused when its rule compiles, naming the rule and why', () => {
    expect(() => compilePlan('p', 'p', [track('R', 1, props({ x: { type: 'string', pattern: '^(?=a)a+$' } }))])).toThrow(
      /^rule TRACK "R" version 1: its JSON Schema does not compile: the pattern "\^\(\?=a\)a\+\$" cannot be used: .*unsupported Perl syntax: `\(\?=`.*no lookahead, lookbehind or backreferences/,
    );
    expect(() => stringRule('(a)\\1')).toThrow(/the pattern "\(a\)\\\\1" cannot be used: .*invalid escape sequence/);
    expect(() => stringRule('a{1001}')).toThrow(/invalid repeat count/);
  });

  it('ECMA-262 escapes mean what they mean in JavaScript', () => {
    expect(toRe2Syntax('^\\u0041\\u{1F600}$')).toBe('^\\x{0041}\\x{1F600}$');
    expect(toRe2Syntax('^\\uD83D\\uDE00$')).toBe('^\\x{1f600}$');
    expect(toRe2Syntax('\\\\u0041')).toBe('\\\\u0041');
    for (const [p, yes, no] of [
      ['^\\u0041+$', 'AAA', 'aaa'],
      ['^\\uD83D\\uDE00$', '\u{1F600}', '\uD83D'],
      ['^[\\u00e0-\\u00ff]{2}$', 'éè', 'ab'],
      ['^.$', '\u{1F600}', 'ab'],
      ['^[A-Z]{3}$', 'EUR', 'eur'],
      ['^ord-[0-9]{8}-[0-9]{4}$', 'ord-12345678-1234', 'ord-1234'],
      ['^(?<cur>[A-Z]{3})$', 'EUR', 'EU'],
    ] as const) {
      expect(check(p, yes), `${p} ${yes}`).toBe(true);
      expect(check(p, no), `${p} ${no}`).toBe(false);
      // The same answers as JavaScript's own engine with Ajv's u flag.
      expect(new RegExp(p, 'u').test(yes)).toBe(true);
      expect(new RegExp(p, 'u').test(no)).toBe(false);
    }
  });
});

describe('schemas that could stall or crash the collector (fresh-eyes review of issue 24)', () => {
  const chain = (n: number) => {
    const definitions: Record<string, unknown> = { d0: { type: 'string' } };
    for (let k = 1; k <= n; k++) definitions[`d${k}`] = { anyOf: [{ $ref: `#/definitions/d${k - 1}` }, { $ref: `#/definitions/d${k - 1}` }] };
    return track('A', 1, { definitions, ...props({ s: { $ref: `#/definitions/d${n}` } }) });
  };

  it('a $ref chain that doubles at each step (2^22 subschemas from 1.7 KB) is refused when it compiles; a short one is kept', () => {
    expect(() => compileRule(chain(22))).toThrow(/runs more than 20,000 subschemas on a call once its \$refs are followed/);
    // The same shape through $id anchors.
    const definitions: Record<string, unknown> = { d0: { $id: '#d0', type: 'string' } };
    for (let k = 1; k <= 22; k++) definitions[`d${k}`] = { $id: `#d${k}`, anyOf: [{ $ref: `#d${k - 1}` }, { $ref: `#d${k - 1}` }] };
    expect(() => compileRule(track('A', 1, { definitions, ...props({ s: { $ref: '#d22' } }) }))).toThrow(/runs more than 20,000 subschemas/);
    const small = compileRule(chain(5));
    expect(small.validate({ type: 'track', event: 'A', properties: { s: 'x' } })).toBe(true);
    expect(small.validate({ type: 'track', event: 'A', properties: { s: 5 } })).toBe(false);
  });

  it('a recursive $ref and $async are refused with a reason, not a stack overflow or a pass', () => {
    expect(() => compileRule(track('A', 1, { type: 'object', properties: { nested: { $ref: '#' } } }))).toThrow(/the \$ref "#" leads back to a schema that contains it: recursive schemas are not supported/);
    expect(() => compileRule(track('A', 1, { definitions: { a: { properties: { x: { $ref: '#/definitions/b' } } }, b: { $ref: '#/definitions/a' } }, $ref: '#/definitions/a' }))).toThrow(/recursive schemas are not supported/);
    expect(() => compileRule(track('A', 1, { $async: true, ...props({ n: { type: 'string' } }, ['n']) }))).toThrow(/"\$async": true is not supported/);
  });

  it('uniqueItems over 3,000 objects is linear and names the pair Ajv would', () => {
    const rule = compileRule(track('A', 1, props({ a: { type: 'array', uniqueItems: true } })));
    const items = Array.from({ length: 3_000 }, (_, i) => ({ a: i, b: { c: [i] } }));
    expect(rule.validate({ type: 'track', event: 'A', properties: { a: items } })).toBe(true);
    // Equal as JSON values, whatever the key order; the last repeat and its nearest earlier twin.
    const dup = [...items, { b: { c: [5] }, a: 5 }, 'x', 'x'.slice(0)];
    expect(rule.validate({ type: 'track', event: 'A', properties: { a: dup } })).toBe(false);
    expect(rule.validate.errors?.[0]).toMatchObject({ keyword: 'uniqueItems', params: { i: 3002, j: 3001 }, instancePath: '/properties/a' });
    expect(describeErrors(rule.validate.errors ?? [], { properties: { a: dup } })[0]!.message).toBe('The value at /properties/a must be unique but elements 3001 and 3002 are the same.');
    expect(rule.validate({ type: 'track', event: 'A', properties: { a: [1, '1', [1], { 1: 1 }] } })).toBe(true);
  });

  it('15,000 wrong items are found, and at most 50 violations are worded and kept', () => {
    const plan = compilePlan('p', 'p', [track('A', 1, props({ a: { type: 'array', items: { type: 'string' } } }))]);
    const verdict = checkCall(plan, ALLOW, { type: 'track', event: 'A', properties: { a: Array(15_000).fill(0) } });
    expect(verdict.violations).toHaveLength(50);
    expect(verdict.violations[0]).toMatchObject({ kind: 'wrong_type', path: '/properties/a/0' });
  });

  it('omit leaves out 2,500 unplanned keys in one pass, and keeps what patternProperties and the COMMON rule list', () => {
    const plan = compilePlan('p', 'p', [
      track('A', 1, { type: 'object', properties: { properties: { type: 'object', properties: { total: {} }, patternProperties: { '^x_': { type: 'number' } } } } }),
      { type: 'COMMON', version: 1, jsonSchema: { type: 'object', properties: { properties: { type: 'object', properties: { app_version: {} } } } } },
    ]);
    const omit = { ...ALLOW, unplannedProperties: 'omit' as const };
    const properties: Record<string, unknown> = { total: 1, x_1: 2, app_version: '3' };
    for (let i = 0; i < 2_500; i++) properties[`junk${i}`] = i;
    const call = { type: 'track', event: 'A', properties };
    const verdict = checkCall(plan, omit, call);
    expect(verdict.omitted).toHaveLength(2_500);
    expect(verdict.omitted).not.toContain('/properties/x_1');
    expect(verdict.omitted).not.toContain('/properties/app_version');
    expect(withoutOmitted(call, verdict.omitted).properties).toEqual({ total: 1, x_1: 2, app_version: '3' });
    // The stored call keeps what arrived.
    expect(Object.keys(call.properties)).toHaveLength(2_503);
  });
});

describe('a track call without an event name', () => {
  it('is unplanned, said without "undefined"', () => {
    const plan = compilePlan('p', 'shop', [track('A')]);
    const verdict = checkCall(plan, { ...ALLOW, unplannedEvents: 'block' }, { type: 'track', userId: 'u' });
    expect(verdict.violations[0]!.message).toBe('A track call without an event name (a string) is not in the tracking plan "shop".');
    expect(verdict.blocked).toBe('unplanned event (no event name)');
  });
});
