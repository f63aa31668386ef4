import validateMapping from '@segment/actions-core/mapping-kit/validate';
import { installActionsRules, type ActionsRuleIssue } from '../../../shared/actions/rules';
import type { Json } from '../../../shared/types';
import { triggerProblem } from './trigger';

// Segment's own checks of a mapping, installed into the shared schema (shared/actions/rules.ts):
// the mapping kit's `validate` (every directive's arguments) and FQL parsing. Imported for its
// effect by the engine and the config loader, so every input the engine takes is checked by them.

/** The mapping kit's validation errors, each with its path inside `data`. */
export function dataProblems(data: Json): ActionsRuleIssue[] {
  try {
    validateMapping(data as never);
    return [];
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    const issues: ActionsRuleIssue[] = [];
    // AggregateError's message lists each as "ValidationError: /a/0/@path should be ….", stack after.
    for (const m of text.matchAll(/ValidationError: \/(\S*) (.+?)\.?\n/g)) {
      const path = m[1] === '' ? [] : m[1].split('/').map((p) => (/^\d+$/.test(p) ? Number(p) : p));
      issues.push({ path, message: m[2] });
    }
    return issues.length > 0 ? issues : [{ path: [], message: text.trim().split('\n')[0] }];
  }
}

installActionsRules({ triggerProblem, dataProblems });
