import type { ActionsTrigger, NormalizedCall, TriggerCondition } from '../types';

// Which calls a mapping takes. Segment writes a trigger in FQL and checks it with
// destination-subscriptions (segmentio/action-destinations, packages/destination-subscriptions/
// src/validate.ts); we keep its two most used conditions, on the call's `type` and on its `event`,
// with the same comparisons: equals is exact and case-sensitive, contains needs a string.
//
// `event` is the call's `event` field, as there (`validateValue(data.event, …)`), not a page's or
// screen's `name`: a trigger on event name only ever matches track calls, which is the surprise
// people meet in Segment's trigger editor. (Segment compares `String(undefined)`, so `event =
// "undefined"` would match a page; that quirk is not kept: a missing event matches no condition.)

/** Does `value` meet `condition`? `undefined` (the call has no such field) never does. */
export function meetsCondition(value: string | undefined, condition: TriggerCondition): boolean {
  if (value === undefined) return false;
  if (typeof condition === 'string') return value === condition;
  if ('equals' in condition) return value === condition.equals;
  if ('contains' in condition) return value.includes(condition.contains);
  return condition.oneOf.includes(value);
}

/**
 * Does the call match every condition the trigger gives? An empty trigger matches every call type.
 * Deletion notifications never match: Webhooks (Actions) has no delete action.
 */
export function matchesTrigger(call: Pick<NormalizedCall, 'type' | 'event'>, trigger: ActionsTrigger): boolean {
  if (call.type === 'delete') return false;
  if (trigger.type !== undefined && !meetsCondition(call.type, trigger.type)) return false;
  if (trigger.event !== undefined && !meetsCondition(call.event, trigger.event)) return false;
  return true;
}

/** A trigger as one line for lists and previews: `type = "track" and event contains "Order"`. */
export function describeTrigger(trigger: ActionsTrigger): string {
  const parts: string[] = [];
  if (trigger.type !== undefined) parts.push(describeCondition('type', trigger.type));
  if (trigger.event !== undefined) parts.push(describeCondition('event', trigger.event));
  return parts.length === 0 ? 'every call' : parts.join(' and ');
}

function describeCondition(field: string, c: TriggerCondition): string {
  if (typeof c === 'string') return `${field} = ${JSON.stringify(c)}`;
  if ('equals' in c) return `${field} = ${JSON.stringify(c.equals)}`;
  if ('contains' in c) return `${field} contains ${JSON.stringify(c.contains)}`;
  return `${field} is one of ${c.oneOf.map((v) => JSON.stringify(v)).join(', ')}`;
}
