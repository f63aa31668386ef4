import type { ApiHandlers } from '../../../shared/api.contract';
import { MAX_VIOLATION_ITEMS, type trackingPlanOps, type ViolationSummary } from '../../../shared/tracking-plans.contract';
import { importTrackingPlan } from '../../../shared/tracking-plan-import';
import { planNameSchema, trackingPlanRulesSchema, type PlanVerdict, type ViolationKind } from '../../../shared/tracking-plan.schema';
import { draftRules } from '../../../shared/tracking-plan-draft';
import { formatTimestamp } from '../../../shared/timestamp';
import { parseOrThrow, ValidationError } from '../../../shared/validation-error';
import type { Store } from '../store/store';
import type { EventHub } from '../event-hub';
import { conflict, invalidInput, notFound } from '../errors';
import type { TrackingPlans } from './service';

type Handlers = Pick<ApiHandlers, keyof typeof trackingPlanOps>;

/**
 * A stored call as its client sent it, with its type: a call sent to /v1/track usually has no `type`
 * in its body (the path gave it), and a draft keys its rules by type.
 */
function asReceived(c: { raw: unknown; type: string }): unknown {
  return typeof c.raw === 'object' && c.raw !== null && !Array.isArray(c.raw) ? { ...(c.raw as Record<string, unknown>), type: c.type } : c.raw;
}

/** Calls read at most for a draft plan. */
const DRAFT_MAX_CALLS = 5_000;
const HOUR_MS = 3_600_000;

/** The control API's tracking-plan operations (src/shared/tracking-plans.contract.ts). */
export function trackingPlanHandlers(d: { store: Store; plans: TrackingPlans; events: EventHub; now: () => number }): Handlers {
  const { store, plans } = d;
  // null means "no plan" to a caller: a source connected to a plan that does not compile says so instead (409).
  const sinceOf = (since: string | undefined) => (since === undefined ? d.now() - HOUR_MS : Date.parse(since));
  // Sources show their plan's name; the plans screen lists the plans.
  const changed = () => {
    d.events.emit({ type: 'sources.changed' });
    d.events.emit({ type: 'plans.changed' });
  };
  return {
    // Each plan's compile status known before it is shown (listKnown).
    listTrackingPlans: () => plans.listKnown(),
    getTrackingPlan: (input) => plans.getKnown(input.id),
    listTrackingPlanStats: async (input) => {
      const list = await plans.listKnown();
      const since = sinceOf(input.since);
      return {
        plans: list,
        stats: Object.fromEntries(list.map((p) => [p.id, plans.ruleStats(p.id, since)])),
        offPlan: Object.fromEntries(list.map((p) => [p.id, plans.offPlanStats(p.id, since)])),
      };
    },
    getTrackingPlanStats: (input) => plans.ruleStats(input.id, sinceOf(input.since)),
    // Each plan is compiled in a check worker before it is saved (issue 38): never on the event loop.
    createTrackingPlan: async (input) => {
      await plans.prepare(input);
      const p = plans.create(input, d.now());
      changed();
      return p;
    },
    replaceTrackingPlan: async (input) => {
      await plans.prepare(input);
      const p = plans.replace(input.id, { name: input.name, rules: input.rules }, d.now());
      changed();
      return p;
    },
    deleteTrackingPlan: (input) => {
      plans.delete(input.id);
      changed();
      return { ok: true as const };
    },
    importTrackingPlan: async (input) => {
      let read;
      try {
        read = importTrackingPlan(input.file);
      } catch (err) {
        throw invalidInput(`file: ${(err as Error).message}`);
      }
      // A name read from the file is held to the rules of one given (trimmed, its length, well-formed text).
      const name = input.name ?? (read.name === null ? null : parseOrThrow(planNameSchema, read.name, ['file', 'name']));
      // On the field, so a screen can ask for it (plans-screen.tsx).
      if (!name) throw new ValidationError([{ path: 'name', message: 'the file names no plan; give one' }]);
      // The file's rules are checked like any other (their paths name the file's rules).
      const rules = parseOrThrow(trackingPlanRulesSchema, read.rules, ['rules']);
      const existing = plans.byName(name);
      if (existing && !input.replace) throw invalidInputConflict(name);
      await plans.prepare({ name, rules });
      const plan = existing ? plans.replace(existing.id, { name, rules }, d.now()) : plans.create({ name, rules }, d.now());
      changed();
      return { plan, shape: read.shape, replaced: existing !== undefined };
    },
    connectTrackingPlan: async (input) => {
      if (input.trackingPlan) await plans.prepareConnection(input.trackingPlan.name);
      const p = plans.connect(input.id, input.trackingPlan);
      changed();
      return p;
    },
    // Checked as the collector checks (on the loop only when cheap, else in a worker with a budget).
    checkTrackingPlanCall: async (input): Promise<PlanVerdict | null> => {
      if (input.rules) return plans.verdictForRules(input.rules, input.call);
      if (input.planId) return plans.verdictForPlan(input.planId, input.call);
      if (!input.sourceId) throw invalidInput('give sourceId, planId or rules');
      if (!store.sources.get(input.sourceId)) throw notFound(`source ${input.sourceId}`);
      // A source without a plan: nothing to check against (null); one whose plan does not compile: 409.
      return plans.verdictForSource(input.sourceId, input.call, {});
    },
    recheckTrackingPlanCalls: async (input) => {
      const calls = input.callIds.map((callId) => {
        const c = store.calls.get(callId);
        if (!c) throw notFound(`message ${callId}`);
        return { callId, c };
      });
      const out: { callId: number; verdict: PlanVerdict | null }[] = [];
      for (const { callId, c } of calls) {
        const item = c.raw;
        if (!c.sourceId || c.status === 'dropped' || typeof item !== 'object' || item === null || Array.isArray(item)) {
          // A source whose plan does not compile says so, whatever the call.
          if (c.sourceId) await plans.assertCheckable(c.sourceId);
          out.push({ callId, verdict: null });
          continue;
        }
        // As at ingest: the batch envelope's context (kept in the normalized form) under the call's own.
        const context = c.normalized?.context;
        // A single-call route's body has no type of its own (the route gave it): the stored call's type.
        const call = { ...(item as Record<string, unknown>), type: c.type };
        out.push({ callId, verdict: await plans.verdictForSource(c.sourceId, call, context ? { context } : {}) });
      }
      return out;
    },
    draftTrackingPlan: (input) => {
      const raws: unknown[] = [];
      // Picked calls all of one source are named after it, as a source's calls are.
      const pickedSources = new Set<string | null>();
      if (input.callIds) {
        for (const id of input.callIds) {
          const c = store.calls.get(id);
          if (!c) throw notFound(`message ${id}`);
          pickedSources.add(c.sourceId);
          raws.push(asReceived(c));
        }
      } else {
        let before: number | undefined;
        while (raws.length < DRAFT_MAX_CALLS) {
          const page = store.calls.list({ sourceId: input.sourceId, before, limit: 500 });
          for (const s of page.items) {
            const c = s.status === 'dropped' ? undefined : store.calls.get(s.id);
            if (c) raws.push(asReceived(c));
          }
          if (page.next === null) break;
          before = page.next;
        }
      }
      const [onlySource] = pickedSources.size === 1 ? pickedSources : [];
      const sourceId = input.sourceId ?? onlySource ?? undefined;
      const sourceName = sourceId ? store.sources.get(sourceId)?.name : undefined;
      return { name: input.name ?? `${sourceName ?? 'observed'} (draft)`, rules: draftRules(raws), calls: raws.length };
    },
    getViolations: async (input): Promise<ViolationSummary> => {
      const since = input.since === undefined ? d.now() - HOUR_MS : Date.parse(input.since);
      const totals = plans.repo.totals(since, input.sourceId);
      const summary = plans.repo.summary(since, input.sourceId, MAX_VIOLATION_ITEMS);
      const items = summary.rows.map((r) => ({
        sourceId: r.sourceId,
        sourceName: store.sources.get(r.sourceId)?.name ?? null,
        type: r.type,
        event: r.event,
        kind: r.kind as ViolationKind,
        count: r.count,
        violations: r.violations,
        lastSeen: formatTimestamp(r.lastSeen),
        exampleCallId: r.exampleCallId,
      }));
      const unchecked = (await plans.uncheckedSourcesNow(input.sourceId)).map((u) => ({ ...u, sourceName: store.sources.get(u.sourceId)?.name ?? null }));
      return { since: formatTimestamp(since), ...totals, items, itemsTotal: summary.total, unchecked };
    },
  };
}

function invalidInputConflict(name: string): Error {
  return conflict(`a tracking plan named "${name}" exists: import with replace: true to replace it`);
}
