import type { JsonObject, MappingValue } from '../types';

// A mapping's URL or header value as one line of text in the Destinations form, and back. As in
// Segment's mapping editor, text with `{{…}}` in it is a template (`{"@template": "…/{{userId}}"}`);
// any other directive is written as its JSON (`{"@path": "$.userId"}`) and read back from it.

/** The text the form shows for a value. */
export function mappingValueText(v: MappingValue): string {
  if (typeof v === 'string') return v;
  const keys = Object.keys(v);
  if (keys.length === 1 && keys[0] === '@template' && typeof v['@template'] === 'string' && v['@template'].includes('{{')) return v['@template'];
  return JSON.stringify(v);
}

/** The value the form's text stands for: a directive's JSON, a template, or the text as it is. */
export function mappingValueOf(text: string): MappingValue {
  const t = text.trim();
  if (t.startsWith('{') && t.endsWith('}')) {
    try {
      const v: unknown = JSON.parse(t);
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as JsonObject;
    } catch {
      // Not JSON: text (a template if it has {{…}}).
    }
  }
  return text.includes('{{') ? { '@template': t } : text;
}
