import { useState } from 'react';
import type { CallDetail } from '../../shared/types';
import type { PlanVerdict, Violation } from '../../shared/tracking-plan.schema';
import { useAppStore } from '../store-context';

// What a call's source's tracking plan found when the call arrived (docs/tracking-plans.md): the
// count on its row, and in its detail the verdict (blocked, omitted) and each violation.

const KIND_LABELS: Record<Violation['kind'], string> = {
  unplanned_event: 'unplanned event',
  unplanned_property: 'unplanned property',
  required_missing: 'required property missing',
  wrong_type: 'wrong type',
  schema: 'schema rule',
  check_timeout: 'not checked in time',
};

/** A row's mark: the number of violations (nothing when its source has no plan, a quiet ✓ when clean). */
export function ViolationsBadge({ count }: { count: number | null | undefined }) {
  if (count === null || count === undefined) return null;
  if (count === 0) {
    return (
      <span className="violations-badge clean" data-testid="violations-badge" data-count={0} title="Checked against its source's tracking plan: no violations">
        ✓
      </span>
    );
  }
  const label = `${count} tracking plan violation${count === 1 ? '' : 's'}`;
  return (
    <span className="violations-badge" data-testid="violations-badge" data-count={count} title={label} aria-label={label}>
      {count}
    </span>
  );
}

function valueText(v: unknown): string {
  if (v === undefined) return '(missing)';
  const text = JSON.stringify(v);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** "Check again against the current plan": what the source's plan as it is now makes of the call (answered only; the call keeps what it had). */
function CheckAgain({ callId }: { callId: number }) {
  const store = useAppStore();
  const [verdict, setVerdict] = useState<PlanVerdict | null | 'none' | undefined>(undefined);
  return (
    <div className="row small-text">
      <button
        type="button"
        className="small"
        data-testid="plan-recheck"
        onClick={async () => setVerdict((await store.getState().recheckCall(callId)) ?? 'none')}
        title="Check this call against its source's plan as it is now; what it was found to have when it arrived stays as it is"
      >
        Check again against the current plan
      </button>
      {verdict === 'none' ? <span data-testid="plan-recheck-result">Its source has no plan now.</span> : null}
      {verdict && verdict !== 'none' ? (
        <span data-testid="plan-recheck-result" data-count={verdict.violations.length}>
          {verdict.violations.length === 0 ? 'Now: no violations.' : `Now: ${verdict.violations.map((v) => v.message).join(' ')}`}
          {verdict.blocked ? ` It would be blocked: ${verdict.blocked}` : ''}
        </span>
      ) : null}
    </div>
  );
}

/** The detail's tracking plan section; nothing when the call was not checked. */
export function PlanCheckView({ detail }: { detail: Pick<CallDetail, 'violations' | 'planCheck'> & { call: { id: number } } }) {
  const { violations, planCheck } = detail;
  if (!violations || !planCheck) return null;
  const plan = planCheck.planName ? `"${planCheck.planName}"` : '(a plan since deleted)';
  return (
    <section className="plan-check" data-testid="plan-check">
      <h3>
        Tracking plan {plan}
        <ViolationsBadge count={violations.length} />
      </h3>
      {planCheck.blocked ? (
        <div className="notice error" data-testid="plan-blocked">
          Blocked by tracking plan, not forwarded: {planCheck.blocked}
        </div>
      ) : null}
      {planCheck.omitted.length ? (
        <div className="notice" data-testid="plan-omitted">
          Left out of what was forwarded (the call as received keeps them): {planCheck.omitted.join(', ')}
        </div>
      ) : null}
      <CheckAgain key={detail.call.id} callId={detail.call.id} />
      {violations.length === 0 ? (
        <div className="muted small-text" data-testid="plan-clean">
          No violations when it arrived.
        </div>
      ) : (
        <table className="kv violations" data-testid="violations">
          <thead>
            <tr>
              <th>kind</th>
              <th>path</th>
              <th>message</th>
              <th>value</th>
              <th>rule</th>
            </tr>
          </thead>
          <tbody>
            {violations.map((v, i) => (
              <tr key={i} data-testid="violation" data-kind={v.kind}>
                <td>{KIND_LABELS[v.kind]}</td>
                <td className="mono">{v.path || '/'}</td>
                <td>{v.message}</td>
                <td className="mono">{valueText(v.value)}</td>
                <td className="mono" data-testid="violation-rule">
                  {v.rule ? <a href="#/plans" title="The plan's rules, on the Tracking plans screen">{`${v.rule.type}${v.rule.key ? ` "${v.rule.key}"` : ''} v${v.rule.version}`}</a> : '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
