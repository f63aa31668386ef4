import type { ActionsTrigger, Json } from '../types';

// Segment's rules for a mapping's trigger (FQL) and data (the mapping kit) come from Segment's own
// packages, which run in the engine only (the renderer's Content-Security-Policy and the layering
// keep them out of src/shared). The engine installs them here at start (main/engine/actions/rules.ts)
// so the one schema (source.schema.ts) checks them wherever it runs there: API, IPC, config files.
// Where nothing is installed (the renderer), the schema checks the shape only and the engine's
// answer names the field; the Destinations screen asks the engine as you type (checkTrigger).

export interface ActionsRuleIssue {
  /** Where in the checked value (for data: inside `data`), for the schema to report. */
  path: (string | number)[];
  message: string;
}

export interface ActionsRules {
  /** Why Segment cannot read this trigger, or null. */
  triggerProblem(trigger: ActionsTrigger | string): string | null;
  /** Where the mapping kit refuses this data, and why; empty when it takes it. */
  dataProblems(data: Json): ActionsRuleIssue[];
}

let installed: ActionsRules | null = null;

export function installActionsRules(rules: ActionsRules): void {
  installed = rules;
}

export function actionsRules(): ActionsRules | null {
  return installed;
}
