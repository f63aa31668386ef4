import { countOf } from '../components/format';
import type { ApiClient } from '../../shared/api.contract';
import type { OffPlanStats } from '../../shared/tracking-plans.contract';
import { ApiError } from '../../shared/api-error';
import type { PlanVerdict, RuleStats, TrackingPlan, TrackingPlanConnection, TrackingPlanRule } from '../../shared/tracking-plan.schema';
import type { SliceCreator } from './app.types';
import { asApiError, errorText } from './errors';

// Tracking plans (issue 24, docs/tracking-plans.md): the plans screen's state. Every check of a
// schema happens in the engine (Ajv generates code; the window's CSP forbids it).

export interface TrackingPlansSlice {
  plans: TrackingPlan[];
  /** Per plan id: each rule's calls matched, passed and failed in the last hour, the worst first. */
  planStats: Record<string, RuleStats[]>;
  /** Per plan id: the calls it blocked and the unplanned events seen in the last hour. */
  planOffPlan: Record<string, OffPlanStats>;
  plansError: ApiError | null;
  /** The plans could not be read: shown in place of "No tracking plan yet". */
  plansLoadError: string | null;
  loadPlans(): Promise<void>;
  /**
   * A plan file's text (Segment Public API rules, Typewriter v8 or v7 plan.json), named `name` when
   * given (else as the file names it). 'unnamed': the file names no plan, nothing was imported (the
   * screen asks for a name).
   */
  importPlanFile(text: string, replace: boolean, name?: string): Promise<boolean | 'unnamed'>;
  /** A draft from a source's observed calls, saved as a new plan. */
  draftPlanFrom(sourceId: string): Promise<boolean>;
  /** Replaces one rule's JSON Schema (the engine compiles it first; refused with the reason otherwise). */
  saveRuleSchema(planId: string, index: number, schemaText: string): Promise<boolean>;
  deletePlan(id: string): Promise<void>;
  /** What the call's source's plan as it is now makes of a stored call (null: no plan now, or the engine could not tell). */
  recheckCall(callId: number): Promise<PlanVerdict | null>;
  /** Connects a source to a plan with its enforcement settings, or disconnects it (null). */
  connectPlan(sourceId: string, connection: TrackingPlanConnection | null): Promise<boolean>;
  /** What the source's plan would make of a call (Compose, as you type); null when the engine could not tell or `signal` withdrew it. */
  checkCallAgainstPlan(sourceId: string, call: Record<string, unknown>, signal?: AbortSignal): Promise<PlanVerdict | null>;
}

export const createTrackingPlansSlice =
  (api: ApiClient): SliceCreator<TrackingPlansSlice> =>
  (set, get) => {
    const fail = (err: unknown) => {
      set({ plansError: asApiError(err) });
      return false;
    };
    // The slice's plan requests run one after another, so a read begun by a live event just before
    // a delete never lands after it and shows the deleted plan again.
    let turn: Promise<unknown> = Promise.resolve();
    const inTurn = <T>(fn: () => Promise<T>): Promise<T> => {
      const run = turn.then(fn, fn);
      turn = run.catch(() => undefined);
      return run;
    };
    return {
      plans: [],
      planStats: {},
      planOffPlan: {},
      plansError: null,
      plansLoadError: null,
      async loadPlans() {
        try {
          const { plans, stats, offPlan } = await inTurn(() => api.call('listTrackingPlanStats', {}));
          set({ plans, planStats: stats, planOffPlan: offPlan, plansLoadError: null });
        } catch (err) {
          set({ plansLoadError: errorText(err) });
        }
      },
      async importPlanFile(text, replace, name) {
        let file: unknown;
        try {
          file = JSON.parse(text);
        } catch (err) {
          set({ plansError: new ApiError(400, `The file is not JSON: ${(err as Error).message}`) });
          return false;
        }
        // Read with the engine's own reader first: a file that names no plan (Segment's rules files) is
        // asked a name for before anything is sent, rather than refused.
        if (name === undefined) {
          // The reader's schemas (zod) load with the first import, not with the first screen (issue 40).
          let reader: typeof import('../../shared/tracking-plan-import');
          try {
            reader = await import('../../shared/tracking-plan-import');
          } catch (err) {
            set({ plansError: new ApiError(0, `The app could not load its rules-file reader: ${(err as Error).message}. Reload the page and import again.`) });
            return false;
          }
          try {
            if (reader.importTrackingPlan(file).name === null) {
              set({ plansError: null });
              return 'unnamed';
            }
          } catch {
            // A file it cannot read: the engine's answer says what is wrong.
          }
        }
        try {
          const r = await inTurn(() => api.call('importTrackingPlan', { file, replace, ...(name === undefined ? {} : { name }) }));
          set({ plansError: null });
          get().notify(`Imported "${r.plan.name}" (${countOf(r.plan.rules.length, 'rule')}, ${r.shape})${r.replaced ? ', replacing the plan of that name' : ''}`, 'info');
          await get().loadPlans();
          return true;
        } catch (err) {
          return fail(err);
        }
      },
      async draftPlanFrom(sourceId) {
        try {
          const draft = await api.call('draftTrackingPlan', { sourceId });
          const plan = await inTurn(() => api.call('createTrackingPlan', { name: draft.name, rules: draft.rules }));
          set({ plansError: null });
          get().notify(`Made "${plan.name}" from ${countOf(draft.calls, 'call')}: ${countOf(plan.rules.length, 'rule')}`, 'info');
          await get().loadPlans();
          return true;
        } catch (err) {
          return fail(err);
        }
      },
      async saveRuleSchema(planId, index, schemaText) {
        const plan = get().plans.find((p) => p.id === planId);
        if (!plan) return false;
        let jsonSchema: Record<string, unknown>;
        try {
          jsonSchema = JSON.parse(schemaText) as Record<string, unknown>;
        } catch (err) {
          set({ plansError: new ApiError(400, `The schema is not JSON: ${(err as Error).message}`) });
          return false;
        }
        const rules: TrackingPlanRule[] = plan.rules.map((r, i) => (i === index ? { ...r, jsonSchema } : r));
        try {
          await inTurn(() => api.call('replaceTrackingPlan', { id: planId, name: plan.name, rules }));
          set({ plansError: null });
          await get().loadPlans();
          return true;
        } catch (err) {
          return fail(err);
        }
      },
      async checkCallAgainstPlan(sourceId, call, signal) {
        try {
          return await api.call('checkTrackingPlanCall', { sourceId, call }, { signal });
        } catch {
          // A call the engine cannot read yet (half typed): the form's own checks say why.
          return null;
        }
      },
      async recheckCall(callId) {
        try {
          const [r] = await api.call('recheckTrackingPlanCalls', { callIds: [callId] });
          return r?.verdict ?? null;
        } catch (err) {
          get().notify(`Could not check the call again: ${errorText(err)}`, 'error');
          return null;
        }
      },
      async connectPlan(sourceId, trackingPlan) {
        try {
          await inTurn(() => api.call('connectTrackingPlan', { id: sourceId, trackingPlan }));
          set({ plansError: null });
          await get().loadPlans();
          return true;
        } catch (err) {
          return fail(err);
        }
      },
      async deletePlan(id) {
        try {
          await inTurn(() => api.call('deleteTrackingPlan', { id }));
          await get().loadPlans();
        } catch (err) {
          get().notify(`Could not delete the plan: ${errorText(err)}`, 'error');
        }
      },
    };
  };
