import type { TrackingPlanRule } from '../../src/shared/tracking-plan.schema';

// A rule whose check of one call runs far past the check budget (250 ms of CPU) on any machine of
// this kind, and that every save-time bound admits (work-bounds.ts: each enum's values × the items it
// may check, 2,500 × 16,384, is under 50,000,000). One such enum over the call's 16,000 items took
// 0.26-0.34 s of CPU on the slower machines, so a CI machine a quarter faster checked it inside the
// budget and the tests that wanted it stopped failed. Eight of them, each applied to every item: 3.3-
// 3.9 s there, 4× the budget on a machine three times as fast.

const BRANCHES = 8;
/** First in every branch: items of it pass at once (a test's light calls, however many items). */
export const LIGHT_VALUE = 'v1';
const OTHERS = Array.from({ length: 2_499 }, (_, i) => `v${i + 2}`);
/** The same values in each branch, the others from another place in each (not one list eight times over). */
const values = (k: number) => [LIGHT_VALUE, ...OTHERS.slice(k * 300), ...OTHERS.slice(0, k * 300)];

export const HEAVY_RULE: TrackingPlanRule = {
  type: 'TRACK',
  key: 'Heavy',
  version: 1,
  jsonSchema: {
    type: 'object',
    properties: { properties: { type: 'object', properties: { a: { type: 'array', items: { allOf: Array.from({ length: BRANCHES }, (_, k) => ({ enum: values(k) })) } } } } },
  },
};

/** `properties.a` of a Heavy call that runs past the budget: as many items as a 32 KB call holds, none in any enum. */
export const heavyItems = () => new Array(16_000).fill(0);

/** `properties.a` of a Heavy call that passes at once. */
export const lightItems = () => [LIGHT_VALUE];
