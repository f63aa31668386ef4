import { describe, expect, it } from 'vitest';
import { compileRule } from '../../src/main/engine/tracking-plans/compile';
import { costFor, MAX_ENUM_COMPARISONS, MAX_NESTED_BRANCHES, MAX_PATTERN_TESTS, ruleWork, SIZE_BUCKETS } from '../../src/main/engine/tracking-plans/work-bounds';
import { INLINE_US } from '../../src/main/engine/tracking-plans/plan-checks';

// What a rule may cost a call, counted when it is saved (issue 38): the hostile rules are
// refused with the place in the schema and the product; rules shaped as Segment Protocols and
// Typewriter write them (hundreds of properties, enums of tens to hundreds of values) are not.
// The schemas are made here, not read from fixtures.

const wrap = (props: Record<string, unknown>) => ({ type: 'object', properties: { properties: { type: 'object', ...props } } });
const track = (jsonSchema: Record<string, unknown>) => ({ type: 'TRACK' as const, key: 'E', version: 1, jsonSchema });
const strings = (n: number, prefix = 'v') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe('refused when saved, with the path and the product', () => {
  it('an enum of 25,000 strings under an array of items (13-22 s a call)', () => {
    const schema = wrap({ properties: { a: { type: 'array', items: { enum: strings(25_000) } } } });
    expect(JSON.stringify(schema).length).toBeLessThan(256 * 1024);
    expect(() => compileRule(track(schema))).toThrow(
      /^at \/properties\/properties\/properties\/a\/items: an enum of 25,000 values × up to 16,384 values it checks in one call \(items of an array with no maxItems at \/properties\/properties\/properties\/a, up to 16,384 in a 32 KB call\) = 409,600,000 comparisons a call; at most 50,000,000/,
    );
  });

  it('8,000 object values in an enum, even with a maxItems of 3,000 (14 s a call)', () => {
    const schema = wrap({ properties: { a: { type: 'array', maxItems: 3_000, items: { enum: Array.from({ length: 8_000 }, (_, i) => ({ k: i })) } } } });
    expect(ruleWork(schema).problem).toMatch(/an enum of 8,000 values \(objects or arrays, each counted 4 times\) × up to 3,000 values .*maxItems 3000.* = 96,000,000 comparisons/);
  });

  it('1,000 patternProperties against the keys an object may hold (6.9 s a call)', () => {
    const schema = wrap({ patternProperties: Object.fromEntries(strings(1_000, '^p').map((p) => [p, { type: 'string' }])), additionalProperties: false });
    expect(ruleWork(schema).problem).toMatch(/^at \/properties\/properties: 1,000 patternProperties × up to 5,461 keys .* = 5,461,000 pattern tests a call; at most 500,000/);
    // With a maxProperties the keys are counted as it says: 1,000 × 100 passes.
    expect(ruleWork(wrap({ maxProperties: 100, patternProperties: Object.fromEntries(strings(1_000, '^p').map((p) => [p, {}])) })).problem).toBeNull();
  });

  it('an anyOf of 5,000 patterns is refused at once, before Ajv (12.4 s, then a stack overflow)', () => {
    const schema = wrap({ properties: { a: { anyOf: strings(5_000, '^x').map((pattern) => ({ pattern })) } } });
    expect(() => compileRule(track(schema))).toThrow(/at \/properties\/properties\/properties\/a\/anyOf: 5,000 branches; at most 500 along one path/);
    // Nested lists count together along their path: 250 inside 300 is over, 250 beside 300 is not.
    const inner = { oneOf: strings(250).map((c) => ({ const: c })) };
    expect(ruleWork(wrap({ properties: { a: { anyOf: [...strings(299).map((c) => ({ const: c })), inner] } } })).problem).toMatch(/250 branches inside 300 more/);
    expect(ruleWork(wrap({ properties: { a: { anyOf: strings(300).map((c) => ({ const: c })) }, b: inner } })).problem).toBeNull();
  });

  it('counts through $refs where they are used', () => {
    const schema = { definitions: { big: { enum: strings(5_000) } }, ...wrap({ properties: { a: { type: 'array', items: { $ref: '#/definitions/big' } } } }) };
    expect(ruleWork(schema).problem).toMatch(/^at \/definitions\/big: an enum of 5,000 values × up to 16,384/);
    // The same enum on one value is nothing.
    expect(ruleWork({ definitions: schema.definitions, ...wrap({ properties: { a: { $ref: '#/definitions/big' } } }) }).problem).toBeNull();
  });
});

describe('real plans are never refused', () => {
  // A Typewriter-style rule: 300 properties, enums of 50 to 300 values, a products array of 20
  // properties each with an enum of 200, a few patternProperties, an anyOf, and $ref'd definitions.
  const product = { type: 'object', properties: Object.fromEntries(strings(20, 'f').map((f, i) => [f, { type: 'string', enum: strings(i === 0 ? 1000 : 200) }])), required: ['f0'] };
  const segmentRule = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    definitions: { money: { type: 'number', minimum: 0 }, currency: { type: 'string', enum: strings(180, 'C') } },
    ...wrap({
      properties: {
        ...Object.fromEntries(strings(300, 'p').map((p, i) => [p, { type: 'string', enum: strings(50 + (i % 6) * 50), description: 'a property' }])),
        total: { $ref: '#/definitions/money' },
        currency: { $ref: '#/definitions/currency' },
        products: { type: 'array', items: product },
        tags: { type: 'array', items: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,63}$' }, uniqueItems: true },
        choice: { anyOf: [{ type: 'string', format: 'email' }, { type: 'string', format: 'uri' }, { type: 'null' }] },
      },
      patternProperties: { '^x_': { type: 'string' }, '^utm_': { type: 'string' }, '^exp_[0-9]+$': { type: 'boolean' } },
      required: ['total', 'currency'],
    }),
  };

  it('a 300-property Segment-style rule compiles, with an estimate per call size', () => {
    const c = compileRule(track(segmentRule));
    expect(c.costUs).toHaveLength(SIZE_BUCKETS.length);
    // Growing with the call it may be applied to, never shrinking.
    for (let b = 1; b < SIZE_BUCKETS.length; b++) expect(c.costUs[b]).toBeGreaterThanOrEqual(c.costUs[b - 1]!);
    // Its worst 32 KB call (thousands of products, each compared with enums of 200) is not for the event loop: its calls go to the workers.
    expect(costFor(c.costUs, 32 * 1024)).toBeGreaterThan(INLINE_US);
  });

  it('a small rule (the bench\'s Order Completed) is estimated cheap for a call of 400 bytes, not for one of 32 KB', () => {
    const order = wrap({
      properties: {
        orderId: { type: 'string', pattern: '^ord-[0-9]{8}-[0-9]{4}$' },
        revenue: { type: 'number', minimum: 0 },
        currency: { enum: ['USD', 'EUR', 'GBP'] },
        products: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' }, price: { type: 'number' }, quantity: { type: 'integer', minimum: 1 } }, required: ['sku', 'price'] } },
      },
      required: ['orderId', 'revenue', 'currency'],
    });
    const { costUs } = compileRule(track(order));
    expect(costFor(costUs, 400)).toBeLessThanOrEqual(INLINE_US);
    expect(costFor(costUs, 32 * 1024)).toBeGreaterThan(INLINE_US);
    // Without arrays or open objects, a rule's cost does not grow with the call: always cheap.
    const flat = compileRule(track(wrap({ properties: Object.fromEntries(strings(100, 'p').map((p) => [p, { type: 'string', enum: strings(20) }])) })));
    expect(costFor(flat.costUs, 32 * 1024)).toBeLessThanOrEqual(INLINE_US);
  });

  it('the bounds leave room over such plans', () => {
    // An enum of 1,000 values on an array with no maxItems (country codes on every item) passes…
    expect(ruleWork(wrap({ properties: { a: { type: 'array', items: { enum: strings(1_000) } } } })).problem).toBeNull();
    // …as do tens of patternProperties and hundreds of anyOf branches.
    expect(ruleWork(wrap({ patternProperties: Object.fromEntries(strings(50, '^p').map((p) => [p, {}])) })).problem).toBeNull();
    expect(ruleWork(wrap({ properties: { a: { anyOf: strings(400).map((c) => ({ const: c })) } } })).problem).toBeNull();
    expect([MAX_ENUM_COMPARISONS, MAX_PATTERN_TESTS, MAX_NESTED_BRANCHES]).toEqual([50_000_000, 500_000, 500]);
  });
});

describe('a call breaking patternProperties with additionalProperties: false', () => {
  it('is worded with Ajv\'s message where Segment\'s formatter throws (it answered 500)', async () => {
    const { compilePlan, checkCall } = await import('../../src/main/engine/tracking-plans/check');
    const plan = compilePlan('p', 'p', [track(wrap({ patternProperties: { '^x_': { type: 'string' } }, additionalProperties: false }))]);
    const v = checkCall(plan, { unplannedEvents: 'allow', unplannedProperties: 'allow', violations: 'allow' }, { type: 'track', event: 'E', properties: { x_a: 'ok', other: 1 } });
    expect(v.violations).toEqual([expect.objectContaining({ kind: 'unplanned_property', path: '/properties/other', message: expect.stringMatching(/additional properties/) })]);
  });
});
