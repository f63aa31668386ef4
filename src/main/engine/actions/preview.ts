import type { ActionsPreviewItem, TriggerCheck } from '../../../shared/actions.contract';
import { triggerFql } from '../../../shared/actions/trigger';
import type { ActionsMapping, ActionsTrigger, NormalizedCall } from '../../../shared/types';
import { isNotSentReason } from './mapping-kit';
import { buildActionsRequest } from './request';
import { compileFql, matchesTrigger, triggerProblem } from './trigger';

// The engine's answers to Compose and the Destinations screen (shared/actions.contract.ts), made
// with the dispatcher's own builders, so a preview is the request that would go out.

export function previewActions(call: NormalizedCall, mappings: readonly ActionsMapping[]): ActionsPreviewItem[] {
  return mappings.map((m) => {
    const check = checkTrigger(m.trigger, call);
    const item: ActionsPreviewItem = { name: m.name, trigger: check.fql, matches: check.matches === true, triggerError: check.error, request: null, notSent: null };
    if (!item.matches) return item;
    try {
      const r = buildActionsRequest(m, [call]);
      item.request = { method: r.method, url: r.url, headers: r.headers, body: r.body, signedText: r.signedText, batch: r.batch };
    } catch (err) {
      if (!isNotSentReason(err)) throw err;
      item.notSent = `not sent: ${err.message}`;
    }
    return item;
  });
}

export function checkTrigger(trigger: ActionsTrigger | string, call?: NormalizedCall): TriggerCheck {
  // Empty FQL text is refused, as a config refuses it (every call is the object form, {}).
  const empty = typeof trigger === 'string' && trigger.trim() === '' ? triggerProblem(trigger) : null;
  if (empty !== null) return { fql: null, error: empty, warning: null, matches: null };
  const fql = triggerFql(trigger);
  const compiled = fql === null ? null : compileFql(fql);
  const error = compiled && 'error' in compiled ? compiled.error : null;
  const warning = compiled && 'warning' in compiled ? compiled.warning : null;
  return { fql, error, warning, matches: call === undefined || error !== null ? null : matchesTrigger(call, trigger) };
}

export function actionsHandlers() {
  return {
    previewActions: (input: { call: NormalizedCall; mappings: ActionsMapping[] }) => previewActions(input.call, input.mappings),
    checkTrigger: (input: { trigger: ActionsTrigger | string; call?: NormalizedCall }) => checkTrigger(input.trigger, input.call),
  };
}
