import { DEFAULT_FAILURE_STATUS, DEFAULT_STATUS, type MockBehavior, type MockReceiver, type MockReceiverInput } from '../../../shared/mock-receiver.schema';

// The receiver form as text fields, and the conversion to the API's definition. Numbers are parsed
// here only to tell "not a number" apart; ranges and combinations are checked by the engine, whose
// messages come back on the same paths (`behavior.delayMs`, `behavior.headers.X-Name`, ...).

export interface HeaderRow {
  name: string;
  value: string;
}

export interface ReceiverDraft {
  name: string;
  path: string;
  secret: string;
  tls: boolean;
  status: string;
  delayMode: 'none' | 'fixed' | 'random';
  delayMs: string;
  delayMinMs: string;
  delayMaxMs: string;
  /** answer normally, never answer, or reset the connection. */
  ending: 'answer' | 'hang' | 'reset';
  failFirst: string;
  failPercent: string;
  seed: string;
  body: string;
  headers: HeaderRow[];
  /** Standard Webhooks secret (whsec_…) to check webhook-signature against; blank = not checked. */
  swSecret: string;
  /** Per-item answer to a batch: statuses cycled over its items, comma-separated (e.g. "200, 422"). */
  itemStatuses: string;
  itemFailPercent: string;
  itemFailStatus: string;
  batchStatus: string;
  /** 401 to a bad or missing signature (unchecked: the receiver accepts any signature). */
  enforceSignature: boolean;
  /** 409 to a messageId already accepted. */
  rejectDuplicates: boolean;
  /** Call types answered; others get 400. Comma-separated; blank: every type. */
  knownTypes: string;
}

export function emptyDraft(existing: number): ReceiverDraft {
  const n = existing + 1;
  return {
    name: `receiver ${n}`,
    path: `/hook-${n}`,
    secret: '',
    tls: false,
    status: '',
    delayMode: 'none',
    delayMs: '',
    delayMinMs: '',
    delayMaxMs: '',
    ending: 'answer',
    failFirst: '',
    failPercent: '',
    seed: '',
    body: '',
    headers: [],
    swSecret: '',
    itemStatuses: '',
    itemFailPercent: '',
    itemFailStatus: '',
    batchStatus: '',
    enforceSignature: false,
    rejectDuplicates: false,
    knownTypes: '',
  };
}

export function draftFromReceiver(r: MockReceiver): ReceiverDraft {
  const b = r.behavior;
  const str = (v: number | undefined) => (v === undefined ? '' : String(v));
  return {
    name: r.name,
    path: r.path,
    secret: r.secret ?? '',
    tls: r.tls,
    status: str(b.status),
    delayMode: b.delay ? 'random' : b.delayMs !== undefined ? 'fixed' : 'none',
    delayMs: str(b.delayMs),
    delayMinMs: str(b.delay?.minMs),
    delayMaxMs: str(b.delay?.maxMs),
    ending: b.hang ? 'hang' : b.reset ? 'reset' : 'answer',
    failFirst: str(b.failFirst),
    failPercent: str(b.failPercent),
    seed: str(b.seed),
    body: b.body ?? '',
    headers: Object.entries(b.headers ?? {}).map(([name, value]) => ({ name, value })),
    swSecret: r.standardWebhooksSecret ?? '',
    itemStatuses: b.itemStatuses?.join(', ') ?? '',
    itemFailPercent: str(b.itemFailPercent),
    itemFailStatus: str(b.itemFailStatus),
    batchStatus: str(b.batchStatus),
    enforceSignature: b.enforceSignature ?? false,
    rejectDuplicates: b.rejectDuplicates ?? false,
    knownTypes: b.knownTypes?.join(', ') ?? '',
  };
}

/** Definition for createReceiver/updateReceiver, or the fields that are not numbers. */
export function draftToInput(d: ReceiverDraft): { input: MockReceiverInput; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const num = (text: string, path: string, integer = true): number | undefined => {
    const t = text.trim();
    if (t === '') return undefined;
    const n = Number(t);
    if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) {
      errors[path] = integer ? 'a whole number' : 'a number';
      return undefined;
    }
    return n;
  };
  const behavior: MockBehavior = {};
  const status = num(d.status, 'behavior.status');
  if (status !== undefined) behavior.status = status;
  if (d.delayMode === 'fixed') {
    const ms = num(d.delayMs, 'behavior.delayMs');
    if (ms === undefined && !errors['behavior.delayMs']) errors['behavior.delayMs'] = 'milliseconds, e.g. 6000';
    else if (ms !== undefined) behavior.delayMs = ms;
  } else if (d.delayMode === 'random') {
    const minMs = num(d.delayMinMs, 'behavior.delay.minMs');
    const maxMs = num(d.delayMaxMs, 'behavior.delay.maxMs');
    if (minMs === undefined && !errors['behavior.delay.minMs']) errors['behavior.delay.minMs'] = 'required';
    if (maxMs === undefined && !errors['behavior.delay.maxMs']) errors['behavior.delay.maxMs'] = 'required';
    if (minMs !== undefined && maxMs !== undefined) behavior.delay = { minMs, maxMs };
  }
  if (d.ending === 'hang') behavior.hang = true;
  if (d.ending === 'reset') behavior.reset = true;
  const failFirst = num(d.failFirst, 'behavior.failFirst');
  if (failFirst !== undefined) behavior.failFirst = failFirst;
  const failPercent = num(d.failPercent, 'behavior.failPercent', false);
  if (failPercent !== undefined) behavior.failPercent = failPercent;
  const seed = num(d.seed, 'behavior.seed');
  if (seed !== undefined) behavior.seed = seed;
  if (d.body !== '') behavior.body = d.body;
  // A row left completely blank is ignored; a value without a name reaches the engine and is refused there.
  const rows = d.headers.filter((h) => h.name !== '' || h.value !== '');
  if (rows.length) behavior.headers = Object.fromEntries(rows.map((h) => [h.name.trim(), h.value]));
  if (d.itemStatuses.trim() !== '') {
    const parts = d.itemStatuses.split(',').map((p) => p.trim()).filter((p) => p !== '');
    const statuses = parts.map(Number);
    if (statuses.some((n) => !Number.isInteger(n))) errors['behavior.itemStatuses'] = 'whole numbers, comma-separated, e.g. 200, 422';
    else behavior.itemStatuses = statuses;
  }
  const itemFailPercent = num(d.itemFailPercent, 'behavior.itemFailPercent', false);
  if (itemFailPercent !== undefined) behavior.itemFailPercent = itemFailPercent;
  const itemFailStatus = num(d.itemFailStatus, 'behavior.itemFailStatus');
  if (itemFailStatus !== undefined) behavior.itemFailStatus = itemFailStatus;
  const batchStatus = num(d.batchStatus, 'behavior.batchStatus');
  if (batchStatus !== undefined) behavior.batchStatus = batchStatus;
  if (d.enforceSignature) behavior.enforceSignature = true;
  if (d.rejectDuplicates) behavior.rejectDuplicates = true;
  const types = d.knownTypes.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (types.length) behavior.knownTypes = types;
  const input: MockReceiverInput = { name: d.name, path: d.path.trim(), tls: d.tls, behavior };
  if (d.secret !== '') input.secret = d.secret;
  if (d.swSecret.trim() !== '') input.standardWebhooksSecret = d.swSecret.trim();
  return { input, errors };
}

/** One line a person reads in the list: what the receiver answers. */
export function behaviorSummary(b: MockBehavior): string {
  const gated = b.failFirst !== undefined || b.failPercent !== undefined;
  const failStatus = b.status ?? DEFAULT_FAILURE_STATUS;
  const failing = b.reset ? 'reset' : b.hang ? 'hang' : String(failStatus);
  const parts: string[] = [];
  if (!gated) {
    // A per-item answer's own status: batchStatus, else 200 when every item is 2xx and 207 when not.
    const perItem = b.itemStatuses !== undefined || b.itemFailPercent !== undefined;
    parts.push(b.reset ? 'reset the connection' : b.hang ? 'hang (never answer)' : String(perItem ? (b.batchStatus ?? '200/207') : (b.status ?? DEFAULT_STATUS)));
  } else {
    const how: string[] = [];
    if (b.failFirst) how.push(`first ${b.failFirst}`);
    if (b.failPercent !== undefined) how.push(`${b.failPercent}%${b.seed !== undefined ? ` (seed ${b.seed})` : ''}`);
    parts.push(`${failing} for ${how.join(' then ') || 'none'}, else 200`);
  }
  if (b.delayMs !== undefined && b.delayMs > 0) parts.push(`after ${fmtMs(b.delayMs)}${b.delayMs > 5000 ? ' (times out)' : ''}`);
  if (b.delay) parts.push(`after ${fmtMs(b.delay.minMs)}–${fmtMs(b.delay.maxMs)} random${b.delay.maxMs > 5000 ? ' (may time out)' : ''}`);
  if (b.itemStatuses) parts.push(`per item ${b.itemStatuses.join('/')}`);
  if (b.itemFailPercent !== undefined) parts.push(`per item ${b.itemFailPercent}% fail with ${b.itemFailStatus ?? 500}`);
  if (b.enforceSignature) parts.push('401 to a bad signature');
  if (b.knownTypes) parts.push(`400 to types but ${b.knownTypes.join('/')}`);
  if (b.rejectDuplicates) parts.push('409 to a duplicate');
  const extras = [b.body !== undefined ? 'custom body' : '', b.headers && Object.keys(b.headers).length ? `${Object.keys(b.headers).length} header(s)` : ''].filter(Boolean);
  if (extras.length) parts.push(`with ${extras.join(' and ')}`);
  return parts.join(', ');
}

function fmtMs(ms: number): string {
  return ms >= 1000 && ms % 100 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
