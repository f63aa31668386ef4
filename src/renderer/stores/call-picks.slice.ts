import type { ApiClient } from '../../shared/api.contract';
import type { SliceCreator } from './app.types';
import { errorText } from './errors';

// Calls picked in the inspector (Ctrl/⌘-click, Shift-click, x) to act on together: draft a tracking
// plan from them, or check them again against their source's plan as it is now (issue 24). Picking is
// apart from the open call (selectedCallId), as in a mail client: the detail pane keeps its call.

/** recheckTrackingPlanCalls takes at most this many calls at once. */
const RECHECK_MAX = 1_000;

export interface CallPicksSlice {
  /** Picked call ids, in the order they were picked. */
  pickedCallIds: number[];
  /** The last call toggled: where a Shift-click range starts. */
  pickAnchor: number | null;
  togglePick(id: number): void;
  /** Picks every loaded call from the anchor (or the first row) to `id`, as listed. */
  pickRange(id: number): void;
  clearPicks(): void;
  /** Drafts a plan from the picked calls and saves it (blank name: the engine names it); the error text, or null when made. */
  draftPlanFromPicks(name: string): Promise<string | null>;
  /** Checks the picked calls against their source's plan now and says what it found. */
  recheckPicks(): Promise<void>;
}

export const createCallPicksSlice =
  (api: ApiClient): SliceCreator<CallPicksSlice> =>
  (set, get) => ({
    pickedCallIds: [],
    pickAnchor: null,
    togglePick(id) {
      const picked = get().pickedCallIds;
      set({ pickedCallIds: picked.includes(id) ? picked.filter((p) => p !== id) : [...picked, id], pickAnchor: id });
    },
    pickRange(id) {
      const { calls, pickAnchor, pickedCallIds } = get();
      const to = calls.findIndex((c) => c.id === id);
      if (to === -1) return;
      const anchor = calls.findIndex((c) => c.id === pickAnchor);
      const from = anchor === -1 ? 0 : anchor;
      const range = calls.slice(Math.min(from, to), Math.max(from, to) + 1).map((c) => c.id);
      const have = new Set(pickedCallIds);
      set({ pickedCallIds: [...pickedCallIds, ...range.filter((r) => !have.has(r))], pickAnchor: id });
    },
    clearPicks() {
      set({ pickedCallIds: [], pickAnchor: null });
    },
    async draftPlanFromPicks(name) {
      const callIds = get().pickedCallIds;
      try {
        const draft = await api.call('draftTrackingPlan', { callIds, ...(name.trim() ? { name: name.trim() } : {}) });
        const plan = await api.call('createTrackingPlan', { name: draft.name, rules: draft.rules });
        get().clearPicks();
        get().notify(`Made the tracking plan "${plan.name}" from ${draft.calls} call${draft.calls === 1 ? '' : 's'}: ${plan.rules.length} rule${plan.rules.length === 1 ? '' : 's'}. Connect a source to it in Tracking plans.`);
        return null;
      } catch (err) {
        return errorText(err);
      }
    },
    async recheckPicks() {
      const callIds = get().pickedCallIds.slice(0, RECHECK_MAX);
      try {
        const results = await api.call('recheckTrackingPlanCalls', { callIds });
        const noPlan = results.filter((r) => r.verdict === null).length;
        const failing = results.filter((r) => r.verdict && (r.verdict.violations.length > 0 || r.verdict.blocked));
        const clean = results.length - noPlan - failing.length;
        const parts = [`${failing.length} with violations${failing.length ? ` (call${failing.length === 1 ? '' : 's'} ${failing.slice(0, 5).map((r) => r.callId).join(', ')}${failing.length > 5 ? ', …' : ''})` : ''}`, `${clean} clean`];
        if (noPlan) parts.push(`${noPlan} of a source without a plan`);
        const more = get().pickedCallIds.length - callIds.length;
        get().notify(`Checked ${results.length} call${results.length === 1 ? '' : 's'} against their source's plan now: ${parts.join(', ')}${more > 0 ? ` (${more} more not checked: ${RECHECK_MAX} at a time)` : ''}. Their stored verdicts are unchanged.`);
      } catch (err) {
        get().notify(`Could not check the calls again: ${errorText(err)}`, 'error');
      }
    },
  });
