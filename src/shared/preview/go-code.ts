import type { CallType } from '../types';

// The Go v2 library's shape (github.com/segmentio/analytics-go 2.x): one struct per call type with
// Context, Integrations, Properties/Traits, AnonymousId, UserId and the type's own fields, plus an
// embedded `Message` carrying MessageId and Timestamp (a string). Alias has only PreviousId and
// UserId. v2 has no Screen method; the preview says so and shows the v2-shaped equivalent.

export interface GoCodeOptions {
  writeKey?: string;
  endpoint?: string;
}

type Msg = Record<string, unknown>;

const STRUCTS: Record<CallType, string> = {
  identify: 'Identify',
  track: 'Track',
  page: 'Page',
  screen: 'Screen',
  group: 'Group',
  alias: 'Alias',
};

// [json key, Go field] in the order the preview lists them.
const STRING_FIELDS: Record<CallType, [string, string][]> = {
  identify: [['userId', 'UserId'], ['anonymousId', 'AnonymousId']],
  track: [['userId', 'UserId'], ['anonymousId', 'AnonymousId'], ['event', 'Event']],
  page: [['userId', 'UserId'], ['anonymousId', 'AnonymousId'], ['name', 'Name'], ['category', 'Category']],
  screen: [['userId', 'UserId'], ['anonymousId', 'AnonymousId'], ['name', 'Name']],
  group: [['userId', 'UserId'], ['anonymousId', 'AnonymousId'], ['groupId', 'GroupId']],
  alias: [['previousId', 'PreviousId'], ['userId', 'UserId']],
};

const MAP_FIELDS: Record<CallType, [string, string][]> = {
  identify: [['traits', 'Traits']],
  track: [['properties', 'Properties']],
  page: [['properties', 'Properties']],
  screen: [['properties', 'Properties']],
  group: [['traits', 'Traits']],
  alias: [],
};

const COMMON_MAPS: [string, string][] = [['context', 'Context'], ['integrations', 'Integrations']];

/** A Go interpreted string literal; JSON's escapes (\" \\ \n \uXXXX) are all valid Go escapes. */
export function goString(s: string): string {
  return JSON.stringify(s);
}

/** A JSON value as a Go literal assignable to interface{}. */
export function goValue(v: unknown, indent: string): string {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'string') return goString(v);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'nil';
  if (typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) {
    if (v.length === 0) return '[]interface{}{}';
    const inner = indent + '\t';
    return `[]interface{}{\n${v.map((x) => `${inner}${goValue(x, inner)},`).join('\n')}\n${indent}}`;
  }
  const entries = Object.entries(v as Msg).map(([k, x]) => [goString(k), goValue(x, indent + '\t')] as [string, string]);
  return `map[string]interface{}{${block(entries, indent)}}`;
}

/**
 * `key: value,` lines at indent+1, aligned the way gofmt aligns them: values line up within runs
 * of consecutive single-line entries; a multi-line entry ends the run.
 */
function block(entries: [string, string][], indent: string): string {
  if (entries.length === 0) return '';
  const inner = indent + '\t';
  const lines: string[] = [];
  let run: [string, string][] = [];
  const flush = () => {
    const width = Math.max(...run.map(([k]) => k.length));
    for (const [k, val] of run) lines.push(`${inner}${k}:${' '.repeat(width - k.length + 1)}${val},`);
    run = [];
  };
  for (const [k, val] of entries) {
    if (val.includes('\n')) {
      if (run.length) flush();
      lines.push(`${inner}${k}: ${val},`);
    } else run.push([k, val]);
  }
  if (run.length) flush();
  return `\n${lines.join('\n')}\n${indent}`;
}

function idLiteral(v: unknown): string {
  // Go v2 ids are strings; a numeric id the UI allowed is shown as its decimal text.
  return goString(String(v));
}

/** Go v2 code that sends the same call: `client.Track(&analytics.Track{...})`. */
export function goCode(type: CallType, message: Msg, options: GoCodeOptions = {}): string {
  const name = STRUCTS[type];
  const entries: [string, string][] = [];
  for (const [key, field] of STRING_FIELDS[type]) {
    const v = message[key];
    if (v !== undefined && v !== null && v !== '') entries.push([field, idLiteral(v)]);
  }
  const maps = type === 'alias' ? [] : [...MAP_FIELDS[type], ...COMMON_MAPS];
  for (const [key, field] of maps) {
    const v = message[key];
    if (v && typeof v === 'object' && !Array.isArray(v)) entries.push([field, goValue(v, '\t')]);
  }
  const embedded: [string, string][] = [];
  if (typeof message.messageId === 'string' && message.messageId) embedded.push(['MessageId', goString(message.messageId)]);
  if (typeof message.timestamp === 'string' && message.timestamp) embedded.push(['Timestamp', goString(message.timestamp)]);
  if (embedded.length) entries.push(['Message', `analytics.Message{${block(embedded, '\t')}}`]);

  const lines: string[] = [];
  if (options.writeKey !== undefined) {
    lines.push(`client := analytics.New(${goString(options.writeKey)})`);
    if (options.endpoint) lines.push(`client.Endpoint = ${goString(options.endpoint)}`);
    lines.push('defer client.Close()', '');
  }
  if (type === 'screen') {
    lines.push('// analytics-go v2 has no Screen method; v3 sends this with client.Enqueue(analytics.Screen{...}).');
  }
  lines.push(`client.${name}(&analytics.${name}{${block(entries, '')}})`);
  return lines.join('\n');
}
