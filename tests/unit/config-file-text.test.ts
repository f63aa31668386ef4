import { describe, expect, it } from 'vitest';
import { configFileText } from '../../src/renderer/stores/config-file-text';
import { MAX_CONFIG_BYTES } from '../../src/shared/config.schema';

// Export config writes a file the lab can read back: indented, unless indenting takes it over the
// 10 MiB a config file may be (a lab with large tracking plans: serve --config refused its own export).

/** A config shaped like one with a large tracking plan: deep schemas indent to several times their size. */
function withPlan(rules: number) {
  const schema = (i: number) => ({ type: 'object', properties: { properties: { type: 'object', properties: { [`field_${i}`]: { type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'object', properties: { c: { type: 'string' } } } } } } } } } } });
  return { version: 2, sources: [], trackingPlans: [{ name: 'Big', rules: Array.from({ length: rules }, (_, i) => ({ type: 'TRACK', key: `Event ${i}`, version: 1, jsonSchema: schema(i) })) }] };
}

describe('configFileText', () => {
  it('indents a config of ordinary size', () => {
    const config = { version: 2, sources: [{ name: 'web' }] };
    expect(configFileText(config)).toEqual({ text: `${JSON.stringify(config, null, 2)}\n`, problem: null });
  });

  it('writes compact JSON when indenting would take the file over the limit, and it reads back', () => {
    const config = withPlan(12_000);
    const pretty = JSON.stringify(config, null, 2);
    expect(Buffer.byteLength(pretty)).toBeGreaterThan(MAX_CONFIG_BYTES);
    const { text, problem } = configFileText(config);
    expect(problem).toBeNull();
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_CONFIG_BYTES);
    expect(JSON.parse(text)).toEqual(config);
  });

  it('says so when even the compact file is over the limit, naming the sizes', () => {
    const config = withPlan(200);
    const compact = Buffer.byteLength(`${JSON.stringify(config)}\n`);
    const { text, problem } = configFileText(config, compact - 1);
    expect(JSON.parse(text)).toEqual(config);
    expect(problem).toMatch(/^the config is \d+\.\d MiB, over the \d+\.\d MiB a config file may be/);
  });
});
