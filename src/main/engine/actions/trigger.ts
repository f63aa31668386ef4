import { parseFql, validate, type Subscription } from '@segment/destination-subscriptions';
import type { ActionsTrigger, NormalizedCall } from '../../../shared/types';
import { triggerFql } from '../../../shared/actions/trigger';

// Which calls a mapping takes, decided by Segment's own subscription code
// (@segment/destination-subscriptions: `parseFql` reads FQL as Segment's trigger editor writes it,
// `validate` runs it on the event). A trigger in the older object form is turned into FQL first
// (shared/actions/trigger.ts), so both forms are decided by the same code. Deletion notices never
// match: Webhooks (Actions) has no delete action.
//
// Segment's parser is lenient: `type = ` parses (as `type = "eos"`), `!` before a group or a field is
// dropped. The lab refuses those (fqlProblem: an operator with nothing after it, `==`, such a `!`) so
// the Destinations screen can say so; what it takes is matched exactly as Segment matches it.

type Compiled = { ast: Subscription } | { error: string };
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
  const problem = fqlProblem(fql);
  if (problem) return { error: problem };
  const ast = parseFql(fql);
  if ('error' in ast) return { error: ast.error?.message || 'not a trigger Segment can read' };
  return { ast };
}

const OPERATORS = new Set(['=', '!=', '<', '<=', '>', '>=']);

/** A problem Segment's parser lets through, or null. */
function fqlProblem(fql: string): string | null {
  if (fql.trim() === '') return 'empty: write a condition such as type = "track"';
  const dangling = /(!=|<=|>=|=|<|>)\s*(\)|$|\band\b|\bor\b)/.exec(fql);
  if (dangling) return `a value is missing after "${dangling[1]}"`;
  // Segment's parser negates contains() and match() only: a `!` before a group or a field is dropped
  // without a word, so the condition would count as written without it, the opposite of what it says.
  if (/!(?!=)\s*(\(|(type|event|name|userId|properties|traits|context)\b)/.test(fql.replace(/"[^"]*"/g, '""'))) {
    return 'Segment\'s parser drops a "!" before a group or a field (the condition would count without it): use != or !contains() / !match()';
  }
  // Operators read whole (`>=` is one, not `>` then `=`), outside quoted values: two in a row, or a
  // run that is none of them (`==`, `=>`), is a typo Segment's parser does not refuse.
  const unquoted = fql.replace(/"[^"]*"/g, '""');
  for (const m of unquoted.matchAll(/[<>=!]+(\s*[<>=]+)?/g)) {
    const run = m[0];
    // `!` alone comes before contains( or match( (a `!` before anything else is refused above).
    if (run !== '!' && (m[1] !== undefined || !OPERATORS.has(run))) return `"${run.replace(/\s+/g, '')}" is not an operator: use =, !=, <, <=, > or >=`;
  }
  return null;
}

/** The problem with a trigger (object or FQL text), or null when Segment can read it. */
export function triggerProblem(trigger: ActionsTrigger | string): string | null {
  const fql = triggerFql(trigger);
  if (fql === null) return null;
  const c = compileFql(fql);
  return 'error' in c ? c.error : null;
}

/** Does the call match the trigger? A trigger that does not parse matches nothing. */
export function matchesTrigger(call: NormalizedCall, trigger: ActionsTrigger | string): boolean {
  if (call.type === 'delete') return false;
  const fql = triggerFql(trigger);
  if (fql === null) return true;
  const c = compileFql(fql);
  if ('error' in c) return false;
  return validate(c.ast, call as never);
}
