import { useEffect, useState } from 'react';
import type { PlanVerdict } from '../../shared/tracking-plan.schema';
import type { JsonObject } from '../../shared/types';
import { useAppStore } from '../store-context';

// Compose's as-you-type check against the source's tracking plan (issue 24): the engine checks the
// call being built (Ajv cannot run in this window: its CSP forbids generated code), a moment after
// typing pauses. Nothing is shown for a source without a plan.

const PAUSE_MS = 300;

export function ComposePlanCheck({ sourceId, type, message }: { sourceId: string | null | undefined; type: string; message: JsonObject }) {
  const store = useAppStore();
  const [verdict, setVerdict] = useState<PlanVerdict | null>(null);
  useEffect(() => {
    if (!sourceId) {
      setVerdict(null);
      return;
    }
    let current = true;
    const t = setTimeout(async () => {
      // A source deleted meanwhile (the list heard of it, the form not yet): nothing to check, and no 404.
      if (!store.getState().sources.some((s) => s.id === sourceId)) return;
      const v = await store.getState().checkCallAgainstPlan(sourceId, { ...message, type });
      if (current) setVerdict(v);
    }, PAUSE_MS);
    return () => {
      current = false;
      clearTimeout(t);
    };
  }, [store, sourceId, type, message]);
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
