import { isPlainObject, validateMessage } from '../../../shared/message-rules';
import { callWalkProblem, MAX_CALL_DEPTH, nonFinitePath, TOO_DEEP_REASON } from '../../../shared/nesting';
import { formatPath } from '../../../shared/validation-error';
import { formatTimestamp, parseTimestamp } from '../../../shared/timestamp';
import { AnalyticsError, AnalyticsValidationError, MessageTooLargeError } from './errors';
import { MAX_MESSAGE_BYTES } from './constants';
import type { ByteArena } from './byte-arena';
import { QueueEntry } from './queue-entry';
import { UUID_LENGTH, uuidV4, uuidV4Into } from './uuid-pool';

/** What every method accepts; the rules of src/shared/message-rules.ts decide what is valid per type. */
export interface MessageBase {
  userId?: string | number;
  anonymousId?: string | number;
  /** Historical import: Date or ISO 8601 string with offset. Omitted: set to the enqueue time. */
  timestamp?: Date | string;
  context?: Record<string, unknown>;
  /** Destination name → true/false (or an options object); `All: false` turns every other off. */
  integrations?: Record<string, boolean | Record<string, unknown>>;
  /** Your own id for de-duplication; a UUID v4 is generated when omitted. */
  messageId?: string;
  [key: string]: unknown;
}

export interface IdentifyMessage extends MessageBase {
  traits?: Record<string, unknown>;
}
export interface TrackMessage extends MessageBase {
  event: string;
  properties?: Record<string, unknown>;
}
export interface PageMessage extends MessageBase {
  name?: string;
  category?: string;
  /** url, title, referrer and path are recognised; any other key is kept. */
  properties?: { url?: string; title?: string; referrer?: string; path?: string; [key: string]: unknown };
}
export interface ScreenMessage extends MessageBase {
  name?: string;
  properties?: Record<string, unknown>;
}
export interface GroupMessage extends MessageBase {
  groupId: string | number;
  traits?: Record<string, unknown>;
}
export interface AliasMessage extends MessageBase {
  userId: string | number;
  previousId: string | number;
}

function isoTimestamp(value: unknown, type: string): string {
  const ms = value instanceof Date ? value.getTime() : parseTimestamp(value);
  const iso = ms === null ? '' : formatTimestamp(ms);
  // validateMessage already checked the form; a Date can still lie outside years 0000–9999.
  if (iso.length !== 24) {
    throw new AnalyticsValidationError(type, [{ field: 'timestamp', message: 'is out of range (years 0000–9999)' }]);
  }
  return iso;
}

// The stamp `{"type":"…","messageId":"…","timestamp":"…"` is written as bytes in front of the
// caller's own serialization, instead of copying the object to add three keys or concatenating
// strings: a validated call type, a generated UUID and an ISO timestamp need no JSON escaping.
// One template per call type holds the stamp of the last timestamp used (calls in the same
// millisecond share it); each message copies it once, then writes its own id over the id's slot.
interface StampTemplate {
  timestamp: string;
  bytes: Buffer;
  /** Where the messageId's 36 bytes go. */
  idAt: number;
}
const STAMPS = new Map<string, StampTemplate>();
const COMMA = 0x2c;
const CLOSE_BRACE = 0x7d;

function stampTemplate(type: string, timestamp: string): StampTemplate {
  let stamp = STAMPS.get(type);
  if (stamp === undefined || stamp.timestamp !== timestamp) {
    const prefix = `{"type":"${type}","messageId":"`;
    const bytes = Buffer.from(`${prefix}${'0'.repeat(UUID_LENGTH)}","timestamp":"${timestamp}"`, 'latin1');
    stamp = { timestamp, bytes, idAt: prefix.length };
    STAMPS.set(type, stamp);
  }
  return stamp;
}

// In both writers: bytes are at least characters, so a text over 32 KB in characters is refused
// before anything is copied; one refused after the copy is not committed, and the arena reuses its space.

/** The usual path: stamp bytes with a fresh messageId, then `json` with its `{` turned into the comma after the stamp. */
function stampedEntry(arena: ByteArena, type: string, timestamp: string, json: string, now: number): QueueEntry {
  const stamp = stampTemplate(type, timestamp);
  const head = stamp.bytes.length;
  if (head + json.length > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(head + Buffer.byteLength(json, 'utf8'), MAX_MESSAGE_BYTES);
  const offset = arena.reserve(head + json.length * 3);
  const chunk = arena.chunk;
  chunk.set(stamp.bytes, offset);
  const idAt = offset + stamp.idAt;
  uuidV4Into(chunk, idAt);
  const jsonAt = offset + head;
  let bytes: number;
  // The rules make `{}` impossible today (every call needs an id); kept so a new rule cannot make invalid JSON.
  if (json === '{}') {
    chunk[jsonAt] = CLOSE_BRACE;
    bytes = head + 1;
  } else {
    bytes = head + chunk.write(json, jsonAt, 'utf8');
    chunk[jsonAt] = COMMA;
  }
  if (bytes > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(bytes, MAX_MESSAGE_BYTES);
  arena.commit(bytes);
  return new QueueEntry(type, chunk, offset, bytes, now, idAt, null);
}

/** A message serialized whole (the caller sent its own type, messageId or timestamp keys). */
function wholeEntry(arena: ByteArena, type: string, json: string, now: number, id: string, messageId: string): QueueEntry {
  if (json.length > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(Buffer.byteLength(json, 'utf8'), MAX_MESSAGE_BYTES);
  const offset = arena.reserve(json.length * 3);
  const chunk = arena.chunk;
  const bytes = chunk.write(json, offset, 'utf8');
  if (bytes > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(bytes, MAX_MESSAGE_BYTES);
  arena.commit(bytes);
  return new QueueEntry(type, chunk, offset, bytes, now, -1, { id, messageId });
}

/** The stamp first, as on the hot path, whatever keys of the same names the caller sent. */
function restamp(input: MessageBase, type: string, messageId: string, timestamp: string): Record<string, unknown> {
  const copy: Record<string, unknown> = { type, messageId, timestamp, ...input };
  copy.type = type;
  copy.messageId = messageId;
  copy.timestamp = timestamp;
  return copy;
}

/**
 * A message with its own toJSON (a class instance, a model object) is sent as JSON.stringify would
 * send it, so the rules run on, and the stamp goes onto, what is actually on the wire. That must be
 * an object: a string or array in its place would make the batch invalid JSON.
 */
function asSerialized(type: string, message: unknown): unknown {
  if (message === null || typeof message !== 'object') return message;
  const toJSON = (message as { toJSON?: unknown }).toJSON;
  if (typeof toJSON !== 'function') return message;
  let wire: unknown;
  try {
    wire = toJSON.call(message, '');
  } catch (err) {
    throw new AnalyticsValidationError(type, [{ field: '', message: `is not serializable to JSON (toJSON threw: ${(err as Error).message})` }]);
  }
  if (wire === null || typeof wire !== 'object' || Array.isArray(wire)) {
    const got = wire === null ? 'null' : Array.isArray(wire) ? 'an array' : typeof wire;
    throw new AnalyticsValidationError(type, [{ field: '', message: `must serialize to a JSON object, but its toJSON() returned ${got}` }]);
  }
  // A plain copy has no toJSON, so the stamp added to it cannot be replaced on the way out.
  return isPlainObject(wire) && wire.toJSON === undefined ? wire : plainCopy(wire as Record<string, unknown>);
}

function plainCopy(source: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(source)) if (key !== 'toJSON') copy[key] = source[key];
  return copy;
}

function serialize(type: string, value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    // Cycles and BigInts cannot go on the wire; say so as a validation problem, not a crash.
    throw new AnalyticsValidationError(type, [{ field: '', message: `is not serializable to JSON (${(err as Error).message})` }]);
  }
}

/**
 * Validate, stamp (type, messageId, timestamp) and serialize one message, once, into `arena`. Throws
 * AnalyticsValidationError or MessageTooLargeError; the caller queues nothing in that case.
 */
export function prepareMessage(type: string, message: unknown, now: number, arena: ByteArena): QueueEntry {
  try {
    return prepare(type, message, now, arena);
  } catch (err) {
    if (err instanceof AnalyticsError) throw err;
    // A getter (or Proxy trap) of the caller's object threw while it was read: a refusal like the others.
    throw new AnalyticsValidationError(type, [{ field: '', message: `could not be read (${(err as Error)?.message ?? String(err)})` }]);
  }
}

function prepare(type: string, message: unknown, now: number, arena: ByteArena): QueueEntry {
  const wire = asSerialized(type, message);
  const violations = validateMessage(type, wire);
  if (violations.length > 0) throw new AnalyticsValidationError(type, violations);
  // The collector would drop it; and past a few thousand levels it could not even be serialized. A
  // cycle also looks endlessly deep: it keeps serialize's own message (a TypeError, where depth is a RangeError).
  const problem = callWalkProblem(wire, MAX_CALL_DEPTH);
  if (problem === 'deep') {
    try {
      serialize(type, wire);
    } catch (err) {
      if (!/call stack/.test((err as Error).message)) throw err;
    }
    throw new AnalyticsValidationError(type, [{ field: '', message: TOO_DEEP_REASON }]);
  }
  // Infinity or NaN would be written as null (JSON has neither): refused naming the field, as the collector drops it.
  if (problem === 'non-finite') throw new AnalyticsValidationError(type, [{ field: formatPath(nonFinitePath(wire)), message: 'is Infinity or NaN, which JSON cannot hold: it would be sent as null' }]);
  const input = wire as MessageBase;
  // Decision (as the Go v2 library): the timestamp is set at enqueue when omitted, so a batch that
  // waits in the queue (or across a restart) still reports when the event happened.
  const timestamp =
    input.timestamp === undefined || input.timestamp === null ? formatTimestamp(now) : isoTimestamp(input.timestamp, type);
  if (input.type === undefined && input.messageId === undefined && input.timestamp === undefined) {
    return stampedEntry(arena, type, timestamp, serialize(type, input), now);
  }
  const id = uuidV4();
  // A caller's own messageId is kept (it may de-duplicate retries of its own); validated as an id above.
  // An empty or blank one counts as none (the Go v2 library generates one for ""), so track() returns an id that is sent.
  const own = input.messageId;
  const messageId = own === undefined || own === null || (typeof own === 'string' && own.trim() === '') ? id : String(own);
  return wholeEntry(arena, type, serialize(type, restamp(input, type, messageId, timestamp)), now, id, messageId);
}
