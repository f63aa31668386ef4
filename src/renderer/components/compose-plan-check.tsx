import { useEffect, useState } from 'react';
import type { PlanVerdict } from '../../shared/tracking-plan.schema';
import type { JsonObject } from '../../shared/types';
import { useApp, useAppStore } from '../store-context';

// Compose's as-you-type check against the source's tracking plan (issue 24): the engine checks the
// call being built (Ajv cannot run in this window: its CSP forbids generated code), a moment after
// typing pauses. Nothing is shown for a source without a plan.
// The engine is asked only about a source the plans list says is connected to a plan that compiles
// (issue 44): any other question has a known answer (none, or 409), and a request the app knows will
// fail is not sent. A check whose source or call changed meanwhile is withdrawn, not just ignored.

const PAUSE_MS = 300;

export function ComposePlanCheck({ sourceId, type, message }: { sourceId: string | null | undefined; type: string; message: JsonObject }) {
  const store = useAppStore();
  const [verdict, setVerdict] = useState<PlanVerdict | null>(null);
  const plan = useApp((s) => (sourceId ? s.plans.find((p) => p.sources.some((c) => c.sourceId === sourceId)) : undefined));
  const checkable = plan !== undefined && !plan.problem;
  // The plan as it is now: an edit or another plan connected checks again, without a keystroke.
  const planVersion = plan ? `${plan.id}@${plan.updatedAt}` : null;
  // Read once when Compose opens; live events read them again while it shows (live-events.ts).
  useEffect(() => {
    void store.getState().loadPlans();
  }, [store]);
  // Another source, or its plan no longer checkable: the last verdict is not its.
  useEffect(() => setVerdict(null), [sourceId, checkable, planVersion]);
  useEffect(() => {
    if (!sourceId || !checkable) return;
    const withdraw = new AbortController();
    const t = setTimeout(async () => {
      // A source deleted meanwhile (the list heard of it, the form not yet): nothing to check, and no 404.
      if (!store.getState().sources.some((s) => s.id === sourceId)) return;
      const v = await store.getState().checkCallAgainstPlan(sourceId, { ...message, type }, withdraw.signal);
      if (!withdraw.signal.aborted) setVerdict(v);
    }, PAUSE_MS);
    return () => {
      withdraw.abort();
      clearTimeout(t);
    };
  }, [store, sourceId, type, message, checkable, planVersion]);
  if (plan?.problem) {
    return (
      <div className="notice error" data-testid="compose-plan-check" data-count={0}>
        The source’s tracking plan “{plan.name}” does not compile, so its calls are not checked: {plan.problem}. Fix it in Tracking plans.
      </div>
    );
  }
  if (!verdict || !verdict.planId) return null;
  const { violations, blocked, omitted } = verdict;
  return (
    <div className={`notice${violations.length ? ' error' : ''}`} data-testid="compose-plan-check" data-count={violations.length}>
      {violations.length === 0 ? (
        'Matches the source’s tracking plan.'
      ) : (
        <>
          <strong>{blocked ? `The source’s tracking plan would block it: ${blocked}` : `${violations.length} tracking plan violation${violations.length === 1 ? '' : 's'}`}</strong>
          <ul>
            {violations.map((v, i) => (
              <li key={i} data-testid="compose-plan-violation" data-kind={v.kind}>
                {v.message}
              </li>
            ))}
          </ul>
          {omitted.length ? <div className="small-text">Left out of what is forwarded: {omitted.join(', ')}</div> : null}
        </>
      )}
    </div>
  );
}
