import type { CallType } from '../types';

// The Go v2 library's shape (github.com/segmentio/analytics-go 2.x, analytics.go): one struct per
// call type with Context, Integrations, a map, AnonymousId, UserId and the type's own fields, plus an
// embedded `Message` carrying MessageId and Timestamp (a string). Page's map is named Traits although
// it is sent as "properties". Alias has only PreviousId and UserId. v2 has no Screen type and no
// client.Screen: the preview says so, shows v3's call in a comment and sends a track with v2.
// tests/unit/preview-go-code.test.ts checks every field against the v2 structs.

export interface GoCodeOptions {
  writeKey?: string;
  endpoint?: string;
}

type Msg = Record<string, unknown>;

type V2Type = Exclude<CallType, 'screen'>;

const STRUCTS: Record<V2Type, string> = {
  identify: 'Identify',
  track: 'Track',
  page: 'Page',
  group: 'Group',
  alias: 'Alias',
};

// [json key, Go field] in the order the preview lists them.
const STRING_FIELDS: Record<V2Type, [string, string][]> = {
  identify: [['userId', 'UserId'], ['anonymousId', 'AnonymousId']],
  track: [['userId', 'UserId'], ['anonymousId', 'AnonymousId'], ['event', 'Event']],
  page: [['userId', 'UserId'], ['anonymousId', 'AnonymousId'], ['name', 'Name'], ['category', 'Category']],
  group: [['userId', 'UserId'], ['anonymousId', 'AnonymousId'], ['groupId', 'GroupId']],
  alias: [['previousId', 'PreviousId'], ['userId', 'UserId']],
};

const MAP_FIELDS: Record<V2Type, [string, string][]> = {
  identify: [['traits', 'Traits']],
  track: [['properties', 'Properties']],
  page: [['properties', 'Traits']],
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

/** `client.Track(&analytics.Track{...})` for a type v2 has. */
function v2Call(type: V2Type, message: Msg): string {
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
  return `client.${name}(&analytics.${name}{${block(entries, '')}})`;
}

/** v3's screen call, for a comment: its Context is a struct and Timestamp a time.Time, so only the rest. */
function v3Screen(message: Msg): string {
  const entries: [string, string][] = [];
  for (const [key, field] of [['userId', 'UserId'], ['anonymousId', 'AnonymousId'], ['name', 'Name']]) {
    const v = message[key];
    if (v !== undefined && v !== null && v !== '') entries.push([field, idLiteral(v)]);
  }
  for (const [key, field] of [['properties', 'Properties'], ['integrations', 'Integrations']]) {
    const v = message[key];
    if (v && typeof v === 'object' && !Array.isArray(v)) entries.push([field, goValue(v, '\t')]);
  }
  return `client.Enqueue(analytics.Screen{${block(entries, '')}})`;
}

/** A screen as the track v2 can send: "Viewed <name> Screen", the name kept in properties. */
function screenAsTrack(message: Msg): Msg {
  const name = typeof message.name === 'string' || typeof message.name === 'number' ? String(message.name) : '';
  const props = message.properties && typeof message.properties === 'object' && !Array.isArray(message.properties) ? (message.properties as Msg) : {};
  const { name: _name, category: _category, properties: _properties, ...rest } = message;
  return { ...rest, event: name ? `Viewed ${name} Screen` : 'Viewed Screen', properties: name ? { name, ...props } : props };
}

/** Go v2 code that sends the same call: `client.Track(&analytics.Track{...})`. */
export function goCode(type: CallType, message: Msg, options: GoCodeOptions = {}): string {
  const lines: string[] = [];
  if (options.writeKey !== undefined) {
    lines.push(`client := analytics.New(${goString(options.writeKey)})`);
    if (options.endpoint) lines.push(`client.Endpoint = ${goString(options.endpoint)}`);
    lines.push('defer client.Close()', '');
  }
  if (type === 'screen') {
    lines.push(
      '// analytics-go v2 cannot send a screen call: it has no Screen type and no client.Screen.',
      '// analytics-go v3 (gopkg.in/segmentio/analytics-go.v3) can:',
      '//',
      ...v3Screen(message).split('\n').map((l) => `// ${l}`),
      '//',
      '// With v2, send it as a track:',
      v2Call('track', screenAsTrack(message)),
    );
  } else {
    lines.push(v2Call(type, message));
  }
  return lines.join('\n');
}
