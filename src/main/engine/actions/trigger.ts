import { generateFql, parseFql, validate, type Subscription } from '@segment/destination-subscriptions';
import type { ActionsTrigger, NormalizedCall } from '../../../shared/types';
import { triggerFql } from '../../../shared/actions/trigger';

// Which calls a mapping takes, decided by Segment's own subscription code
// (@segment/destination-subscriptions: `parseFql` reads FQL as Segment's trigger editor writes it,
// `validate` runs it on the event). A trigger in the older object form is turned into FQL first
// (shared/actions/trigger.ts), so both forms are decided by the same code. Deletion notices never
// match: Webhooks (Actions) has no delete action.
//
// Segment's parser is lenient: `type = ` parses (as `type = "eos"`), `not` and a `!` before a group or
// a field are dropped, single quotes stay part of the value. The lab refuses only what that parser
// refuses (issue 37: a check of the lab's own is a warning, never a refusal) and matches what it
// takes exactly as Segment does; the forms that read otherwise than they look are warned about
// (labTriggerConcern), with the condition Segment reads them as.

type Compiled = { ast: Subscription; warning: string | null } | { error: string };
const cache = new Map<string, Compiled>();
const MAX_CACHED = 500;

/** The parsed FQL, or why it is not FQL Segment reads. Cached: the same text is asked for per call. */
export function compileFql(fql: string): Compiled {
  const hit = cache.get(fql);
  if (hit) return hit;
  const out = parse(fql);
  if (cache.size >= MAX_CACHED) cache.clear();
  cache.set(fql, out);
  return out;
}

function parse(fql: string): Compiled {
  const ast = parseFql(fql);
  if ('error' in ast) {
    const message = ast.error?.message || '';
    // The parser's own message is often a TypeError from inside it: said as what usually causes it.
    if (message === '' || /^Cannot read propert/.test(message)) return { error: `not FQL it can read: check the parentheses, the field names (type, event, properties.…) and the quotes (its message: ${message || 'none'})` };
    return { error: message };
  }
  let reads: string;
  try {
    reads = generateFql(ast);
  } catch {
    // An empty group (`type = "a" or ()`) parses to a hole validate() throws on when a call reaches it.
    return { ast, warning: "Segment's parser takes it but cannot evaluate it (an empty group?): a call its evaluation reaches there fails and is not sent (the lab's own check)" };
  }
  const concern = labTriggerConcern(fql, reads);
  if (concern === null) return { ast, warning: null };
  return { ast, warning: `${concern}; Segment's parser takes it and reads it as: ${reads} (the lab's own check: it sends what Segment sends)` };
}

const OPERATORS = new Set(['=', '!=', '<', '<=', '>', '>=']);

/** A form Segment's parser takes but reads otherwise than it looks, or null. */
export function labTriggerConcern(fql: string, reads = ''): string | null {
  const dangling = /(!=|<=|>=|=|<|>)\s*(\)|$|\band\b|\bor\b)/.exec(fql);
  if (dangling) return `a value is missing after "${dangling[1]}"`;
  const unquoted = fql.replace(/"[^"]*"/g, '""');
  // The parser reads the end of the text as the value "eos" wherever one was still expected (`contains(event,`).
  if (reads.includes('"eos"') && !fql.includes('eos')) return 'the text ends where a value was expected';
  let depth = 0;
  for (const ch of unquoted) {
    depth += ch === '(' ? 1 : ch === ')' ? -1 : 0;
    if (depth < 0) break;
  }
  if (depth !== 0) return 'the parentheses do not balance';
  if (/(^|[\s(])(and|or)\s*($|\))/.test(unquoted)) return 'nothing follows "and" / "or"';
  // Segment's parser negates contains() and match() only: a `!` or `not` before a group or a field is
  // dropped, so the condition counts as written without it, the opposite of what it says.
  if (/!(?!=)\s*(\(|(type|event|name|userId|properties|traits|context)\b)/.test(unquoted)) {
    return '"!" before a group or a field is dropped (only !contains() and !match() negate): use != instead';
  }
  if (/(^|[\s(])not\b/i.test(unquoted)) return '"not" is dropped (FQL has no "not": only != , !contains() and !match() negate)';
  if (/'[^']*'/.test(unquoted)) return 'single quotes are kept as part of the value (FQL strings take double quotes)';
  // Operators read whole (`>=` is one, not `>` then `=`): two in a row, or a run that is none of
  // them (`==`, `=>`), is a typo the parser reads as something else.
  for (const m of unquoted.matchAll(/[<>=!]+(\s*[<>=]+)?/g)) {
    const run = m[0];
    if (run !== '!' && (m[1] !== undefined || !OPERATORS.has(run))) return `"${run.replace(/\s+/g, '')}" is not an operator (=, !=, <, <=, > or >=)`;
  }
  return null;
}

/** The problem with a trigger (object or FQL text), or null when Segment can read it. */
export function triggerProblem(trigger: ActionsTrigger | string): string | null {
  // Segment's parser refuses empty FQL (its subscription then fails every event); "every call" is
  // the object form with no condition, which is what omitting the trigger gives.
  if (typeof trigger === 'string' && trigger.trim() === '') return 'empty: Segment\'s parser refuses an empty trigger; omit the trigger (or give {}) for every call';
  const fql = triggerFql(trigger);
  if (fql === null) return null;
  const c = compileFql(fql);
  return 'error' in c ? c.error : null;
}

/** The lab's warning about a trigger Segment reads otherwise than it looks (labTriggerConcern), or null. */
export function triggerWarning(trigger: ActionsTrigger | string): string | null {
  const fql = triggerFql(trigger);
  if (fql === null) return null;
  const c = compileFql(fql);
  return 'error' in c ? null : c.warning;
}

/** Does the call match the trigger? A trigger that does not parse matches nothing. */
export function matchesTrigger(call: NormalizedCall, trigger: ActionsTrigger | string): boolean {
  if (call.type === 'delete') return false;
  const fql = triggerFql(trigger);
  if (fql === null) return true;
  const c = compileFql(fql);
  if ('error' in c) return false;
  try {
    return validate(c.ast, call as never);
  } catch {
    // Segment's validate throws on what it parsed into a hole (see parse): that call fails, nothing is sent.
    return false;
  }
}
