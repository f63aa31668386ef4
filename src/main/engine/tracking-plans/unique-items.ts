import type { FuncKeywordDefinition, SchemaValidateFunction } from 'ajv';

// JSON Schema's uniqueItems in linear time. Ajv's own compares every pair of items that are not all
// scalars (3,000 small objects in a 32 KB call: 0.75 s; a batch of them stalls the collector for
// seconds): here each item is written once in a canonical form (keys sorted) and looked up. Equal
// as JSON Schema means equal as JSON values, which the canonical form is. The error is Ajv's, with
// the pair Ajv's loop would name (the last item that repeats an earlier one, and the nearest earlier).

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const validate: SchemaValidateFunction = function uniqueItems(schema: boolean, data: unknown[]): boolean {
  if (!schema || data.length < 2) return true;
  const last = new Map<string, number>();
  let pair: [number, number] | null = null;
  for (let k = 0; k < data.length; k++) {
    const c = canonical(data[k]);
    const before = last.get(c);
    if (before !== undefined) pair = [k, before];
    last.set(c, k);
  }
  if (!pair) return true;
  const [i, j] = pair;
  validate.errors = [{ keyword: 'uniqueItems', params: { i, j }, message: `must NOT have duplicate items (items ## ${j} and ${i} are identical)` }];
  return false;
};

export const uniqueItemsKeyword: FuncKeywordDefinition = { keyword: 'uniqueItems', type: 'array', schemaType: 'boolean', errors: true, validate };
