import { isPlainObject, validateMessage } from '../../../shared/message-rules';
import { formatTimestamp, parseTimestamp } from '../../../shared/timestamp';
import { AnalyticsValidationError, MessageTooLargeError } from './errors';
import { MAX_MESSAGE_BYTES } from './constants';
import type { QueuedMessage } from './persistence';
import { uuidV4 } from './uuid-pool';

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

/**
 * The stamp written in front of the caller's own serialization, instead of copying the object to
 * add three keys. Only for a validated call type, a generated UUID and an ISO timestamp: none of
 * them needs JSON escaping.
 */
function withStamp(type: string, messageId: string, timestamp: string, rest: string): string {
  const stamp = '{"type":"' + type + '","messageId":"' + messageId + '","timestamp":"' + timestamp + '"';
  return rest === '{}' ? stamp + '}' : stamp + ',' + rest.slice(1);
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

/**
 * Validate, stamp (type, messageId, timestamp) and serialize one message, once. Throws
 * AnalyticsValidationError or MessageTooLargeError; the caller queues nothing in that case.
 */
export function prepareMessage(type: string, message: unknown, now: number): QueuedMessage {
  const wire = asSerialized(type, message);
  const violations = validateMessage(type, wire);
  if (violations.length > 0) throw new AnalyticsValidationError(type, violations);
  const input = wire as MessageBase;
  const id = uuidV4();
  // A caller's own messageId is kept (it may de-duplicate retries of its own); validated as an id above.
  const messageId = input.messageId === undefined || input.messageId === null ? id : String(input.messageId);
  // Decision (as the Go v2 library): the timestamp is set at enqueue when omitted, so a batch that
  // waits in the queue (or across a restart) still reports when the event happened.
  const timestamp =
    input.timestamp === undefined || input.timestamp === null ? formatTimestamp(now) : isoTimestamp(input.timestamp, type);
  let json: string;
  try {
    json =
      input.type === undefined && input.messageId === undefined && input.timestamp === undefined
        ? withStamp(type, id, timestamp, JSON.stringify(input))
        : JSON.stringify(restamp(input, type, messageId, timestamp));
  } catch (err) {
    // Cycles and BigInts cannot go on the wire; say so as a validation problem, not a crash.
    throw new AnalyticsValidationError(type, [{ field: '', message: `is not serializable to JSON (${(err as Error).message})` }]);
  }
  // Measuring also flattens the concatenation once, here, rather than when each batch is built.
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_MESSAGE_BYTES) throw new MessageTooLargeError(bytes, MAX_MESSAGE_BYTES);
  return { id, messageId, type, json, bytes, enqueuedAt: now };
}
