import { describe, expect, it } from 'vitest';
import '../../src/main/engine/actions/rules';
import { mappingValueOf, mappingValueText } from '../../src/shared/actions/mapping-value';
import { configSchema } from '../../src/shared/config.schema';

// Issue 37, item 2: a mapping's URL and header values are text or a directive. The Destinations form
// writes them as one line: `{{…}}` makes a template, as in Segment's editor; other directives are JSON.
describe('mapping values in the form', () => {
  it('reads text with {{…}} as a template and JSON objects as directives, and writes them back the same', () => {
    expect(mappingValueOf('https://r.example/a')).toBe('https://r.example/a');
    expect(mappingValueOf('https://r.example/u/{{userId}}')).toEqual({ '@template': 'https://r.example/u/{{userId}}' });
    expect(mappingValueOf('{"@path": "$.userId"}')).toEqual({ '@path': '$.userId' });
    expect(mappingValueOf('{not json}')).toBe('{not json}');
    for (const text of ['https://r.example/u/{{userId}}', '{"@path":"$.userId"}', 'plain', ' spaced ']) expect(mappingValueText(mappingValueOf(text))).toBe(text);
  });
});

describe('the schema', () => {
  const config = (mapping: Record<string, unknown>) => ({ sources: [{ name: 's', webhooks: { enabled: true, mode: 'actions', mappings: [{ name: 'm', ...mapping }] } }] });
  it('takes a directive as the url and as a header value, checked by the mapping kit', () => {
    expect(configSchema.safeParse(config({ url: { '@template': 'https://r.example/{{userId}}' }, headers: { 'X-U': { '@path': '$.userId' } } })).success).toBe(true);
    const bad = configSchema.safeParse(config({ url: { '@path': 5 }, headers: { 'X-U': { '@template': 7 } } }));
    expect(bad.success).toBe(false);
    const paths = bad.error!.issues.map((i) => i.path.join('.'));
    expect(paths.some((p) => p.startsWith('sources.0.webhooks.mappings.0.url'))).toBe(true);
    expect(paths.some((p) => p.startsWith('sources.0.webhooks.mappings.0.headers.X-U'))).toBe(true);
  });
});
