import type { ActionsTrigger, TriggerCondition } from '../types';
import { CALL_TYPES } from '../types';

// A trigger as FQL, the language Segment's trigger editor writes. The engine parses and runs it
// with Segment's own code (main/engine/actions/trigger.ts); this module only writes the older
// object form (`{ "type": "track", "event": { "contains": "Order" } }`) out as FQL, so both forms are
// shown alike and decided by the same rules.

/** A trigger as one line for lists and previews: its FQL, or "every call". */
export function describeTrigger(trigger: ActionsTrigger | string): string {
  return triggerFql(trigger) ?? 'every call';
}

/**
 * A trigger as the FQL Segment's subscription editor writes (`type = "track" and contains(event,
 * "Order")`); null when it takes every call (an empty object, or empty text). FQL text is returned
 * as written (trimmed); the engine parses and runs it with Segment's own code
 * (main/engine/actions/trigger.ts), so the older object form is decided by the same rules.
 */
export function triggerFql(trigger: ActionsTrigger | string): string | null {
  if (typeof trigger === 'string') return trigger.trim() === '' ? null : trigger.trim();
  const parts: string[] = [];
  if (trigger.type !== undefined) parts.push(conditionFql('type', trigger.type));
  if (trigger.event !== undefined) parts.push(conditionFql('event', trigger.event));
  return parts.length === 0 ? null : parts.join(' and ');
}

// FQL strings are double-quoted and cannot hold a double quote (Segment's parser strips the quotes
// and does not unescape); the schema refuses one in a condition.
const q = (v: string) => `"${v}"`;

function anyOf(field: string, values: readonly string[]): string {
  if (values.length === 1) return `${field} = ${q(values[0])}`;
  return `(${values.map((v) => `${field} = ${q(v)}`).join(' or ')})`;
}

function conditionFql(field: 'type' | 'event', c: TriggerCondition): string {
  if (typeof c === 'string') return `${field} = ${q(c)}`;
  if ('equals' in c) return `${field} = ${q(c.equals)}`;
  if ('oneOf' in c) return anyOf(field, c.oneOf);
  if (field === 'event') return `contains(event, ${q(c.contains)})`;
  // FQL has no contains() on type: the call types that contain the text, or none.
  const types = CALL_TYPES.filter((t) => t.includes(c.contains));
  return anyOf('type', types.length > 0 ? types : [c.contains]);
}
