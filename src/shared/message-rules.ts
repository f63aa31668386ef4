import { CALL_TYPES, type CallType } from './types';
import { checkTimestamp } from './timestamp';
import { callWalkProblem, MAX_CALL_DEPTH, nestsDeeperThan, NON_FINITE_REASON, nonFinitePath, TOO_DEEP_REASON } from './nesting';
import { formatPath } from './validation-error';

// The one place that says what a valid call is. Three readers:
// - the batching client (validateMessage; it throws on any violation, SPEC §5),
// - the UI (validateMessage; violations become inline errors on their dotted field path),
// - the collector (collectorDropReason; the first problem becomes the stored drop reason, SPEC §3).
// Both entry points run the same Check objects; the collector just runs a more lenient subset.
//
// Decisions (stated in the README):
// - An id (userId, anonymousId, groupId, previousId) is a non-blank string or a finite number.
//   Numbers are accepted by both sides because real SDKs let them through; the collector stringifies
//   them. A whitespace-only string counts as missing. `null` counts as absent everywhere.
// - `integrations` values may be booleans or option objects (destinations take settings objects,
//   e.g. `{ "Webhooks": { ... } }`); the client refuses anything else, the collector only needs an
//   object (routing treats other truthy values as enabled).
// - The collector drops a call nesting objects and arrays more than MAX_CALL_DEPTH levels (nesting.ts).
// - `context`, `properties`, `traits`, `integrations`, when present, must be plain JSON objects
//   (not arrays); the collector drops such calls too, since a receiver could not use them.

export interface RuleViolation {
  /** Dotted path of the offending field, e.g. `integrations.Webhooks`; '' for the message itself. */
  field: string;
  message: string;
}

type Msg = Record<string, unknown>;

/** A violation plus the short sentence the collector stores as a drop reason. */
interface Finding extends RuleViolation {
  reason: string;
}

type Check = (m: Msg, type: CallType) => Finding[];

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const present = (v: unknown) => v !== undefined && v !== null;

export function isId(v: unknown): v is string | number {
  return (typeof v === 'string' && v.trim() !== '') || (typeof v === 'number' && Number.isFinite(v));
}

export function isCallType(t: unknown): t is CallType {
  return typeof t === 'string' && (CALL_TYPES as readonly string[]).includes(t);
}

const one = (field: string, message: string, reason: string): Finding[] => [{ field, message, reason }];

// Each rule's condition is a predicate on one value, shared by the Check that reports it and by the
// fast path (passesClientChecks), which differ only in where they apply it (a unit test compares them).

/** A present id field must be usable as an id: `userId: {}` is not "absent". Blank strings are left to the requirement checks. */
const badIdShape = (v: unknown) => present(v) && typeof v !== 'string' && !isId(v);
const badString = (v: unknown) => present(v) && typeof v !== 'string';
const badObject = (v: unknown) => present(v) && !isPlainObject(v);
const badIntegration = (v: unknown) => typeof v !== 'boolean' && !isPlainObject(v);
const isEventName = (v: unknown) => typeof v === 'string' && v.trim() !== '';

const identity =
  (types: readonly CallType[]): Check =>
  (m, type) =>
    types.includes(type) && !isId(m.userId) && !isId(m.anonymousId)
      ? one('userId', 'userId or anonymousId is required', 'missing userId or anonymousId')
      : [];

const requiredId =
  (type: CallType, field: string): Check =>
  (m, t) =>
    t === type && !isId(m[field]) ? one(field, `required for ${type}`, `${type} without ${field}`) : [];

const trackEvent: Check = (m, t) =>
  t === 'track' && !isEventName(m.event)
    ? one('event', 'required for track (a non-empty string)', 'track without event')
    : [];

const idShape =
  (field: string): Check =>
  (m) =>
    badIdShape(m[field]) ? one(field, 'must be a string or a number', `${field} must be a string or a number`) : [];

const stringShape =
  (field: string): Check =>
  (m) =>
    badString(m[field]) ? one(field, 'must be a string', `${field} must be a string`) : [];

const objectShape =
  (field: string): Check =>
  (m) =>
    badObject(m[field]) ? one(field, 'must be an object', `${field} must be an object`) : [];

const integrationValues: Check = (m) => {
  if (!isPlainObject(m.integrations)) return [];
  return Object.entries(m.integrations)
    .filter(([, v]) => badIntegration(v))
    .map(([k]) => ({
      field: `integrations.${k}`,
      message: 'must be true, false or an options object',
      reason: `integrations.${k} must be true, false or an options object`,
    }));
};

/** The problem with a present timestamp, or null when it is a valid Date or an accepted string. */
function timestampProblem(v: unknown): Finding[] | null {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? one('timestamp', 'is an invalid Date', 'invalid timestamp') : null;
  const r = checkTimestamp(v);
  return r.ok ? null : one('timestamp', r.problem, `invalid timestamp: ${r.problem}`);
}

const timestampShape: Check = (m) => (present(m.timestamp) ? (timestampProblem(m.timestamp) ?? []) : []);

const ALL_TYPES = CALL_TYPES;
const IDENTIFIED_TYPES: readonly CallType[] = ['identify', 'track', 'page', 'screen', 'group'];

// Shape checks run before requirements so that `event: 12` reads "must be a string", not "missing".
const VALUE_SHAPES: Check[] = [
  ...['userId', 'anonymousId', 'groupId', 'previousId', 'messageId'].map(idShape),
  ...['event', 'name', 'category'].map(stringShape),
];
const OBJECT_SHAPES: Check[] = ['context', 'properties', 'traits', 'integrations'].map(objectShape);

const REQUIREMENTS: Check[] = [trackEvent, requiredId('group', 'groupId'), requiredId('alias', 'previousId')];

// The client also requires alias.userId (SPEC §5); the collector only needs some identity on alias.
const CLIENT_CHECKS: Check[] = [
  ...VALUE_SHAPES,
  identity(IDENTIFIED_TYPES),
  requiredId('alias', 'userId'),
  ...REQUIREMENTS,
  ...OBJECT_SHAPES,
  integrationValues,
  timestampShape,
];

// Timestamps are not here: the collector parses them while normalizing (normalize.ts) and drops there.
const COLLECTOR_CHECKS: Check[] = [...VALUE_SHAPES, identity(ALL_TYPES), ...REQUIREMENTS, ...OBJECT_SHAPES];

/**
 * True exactly when CLIENT_CHECKS find nothing. The batching client validates every enqueue, and a
 * valid message is the common case: this answers it with static property reads and no allocation,
 * leaving the ordered list of violations to the checks themselves.
 */
export function passesClientChecks(m: Msg, type: CallType): boolean {
  if (badIdShape(m.userId) || badIdShape(m.anonymousId) || badIdShape(m.groupId) || badIdShape(m.previousId) || badIdShape(m.messageId)) {
    return false;
  }
  if (badString(m.event) || badString(m.name) || badString(m.category)) return false;
  if (type === 'alias') {
    if (!isId(m.userId) || !isId(m.previousId)) return false;
  } else if (!isId(m.userId) && !isId(m.anonymousId)) {
    return false;
  }
  if (type === 'track' && !isEventName(m.event)) return false;
  if (type === 'group' && !isId(m.groupId)) return false;
  if (badObject(m.context) || badObject(m.properties) || badObject(m.traits) || badObject(m.integrations)) return false;
  if (present(m.integrations)) {
    for (const v of Object.values(m.integrations as Msg)) if (badIntegration(v)) return false;
  }
  return !present(m.timestamp) || timestampProblem(m.timestamp) === null;
}

function unknownType(type: unknown): string {
  if (!present(type)) return 'missing type';
  // Not serialized when it is an object or array: it may be nested beyond what JSON.stringify survives.
  if (typeof type === 'object') return `unknown type (${Array.isArray(type) ? 'an array' : 'an object'})`;
  const shown = JSON.stringify(type) ?? String(type);
  return `unknown type ${shown.length > 40 ? `${shown.slice(0, 40)}…` : shown}`;
}

/** Every problem of a message the client (or the UI's builder) is about to send, in a stable order. */
export function validateMessage(type: string, message: unknown): RuleViolation[] {
  if (!isCallType(type)) {
    return [{ field: 'type', message: `${unknownType(type)} (expected one of ${CALL_TYPES.join(', ')})` }];
  }
  if (!isPlainObject(message)) return [{ field: '', message: 'must be an object' }];
  return passesClientChecks(message, type) ? [] : clientViolations(message, type);
}

/** What CLIENT_CHECKS find, one violation per field: the first (most specific), which is what an inline error can show. */
export function clientViolations(m: Msg, type: CallType): RuleViolation[] {
  const out: RuleViolation[] = [];
  for (const check of CLIENT_CHECKS) {
    for (const { field, message } of check(m, type)) {
      if (!out.some((v) => v.field === field)) out.push({ field, message });
    }
  }
  return out;
}

/**
 * Why the collector must drop this item, or null when it may be accepted (SPEC §3), by the rules of
 * a normalization version (normalize.ts): from version 2 a number JSON cannot carry is dropped too.
 */
export function collectorDropReason(item: unknown, rulesVersion: number): string | null {
  if (!isPlainObject(item)) return 'not a JSON object';
  if (!isCallType(item.type)) return unknownType(item.type);
  const type = item.type;
  for (const check of COLLECTOR_CHECKS) {
    const found = check(item, type);
    if (found.length) return found[0].reason;
  }
  // Last, as the one check that walks the whole call (nesting.ts says why there is a limit).
  if (rulesVersion < 2) return nestsDeeperThan(item, MAX_CALL_DEPTH) ? TOO_DEEP_REASON : null;
  const problem = callWalkProblem(item, MAX_CALL_DEPTH);
  if (problem === 'deep') return TOO_DEEP_REASON;
  return problem === 'non-finite' ? `${formatPath(nonFinitePath(item))}: ${NON_FINITE_REASON}` : null;
}
