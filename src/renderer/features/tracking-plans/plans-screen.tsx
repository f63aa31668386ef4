import { useEffect, useRef, useState } from 'react';
import type { RuleStats, TrackingPlan } from '../../../shared/tracking-plan.schema';
import { EmptyState } from '../../components/field';
import { countOf, formatDateTime } from '../../components/format';
import { useApp, useAppShallow, useAppStore } from '../../store-context';
import { LoadError } from '../../components/load-error';
import { useUnsaved } from '../../components/leave-dialog';

// Tracking plans (issue 24, docs/tracking-plans.md): import a plan file, make a draft from a source's
// calls, read each plan's rules and the sources checked against it, edit a rule's JSON Schema (the
// engine compiles it before saving and says why it does not), delete a plan. Connecting a source, with
// its enforcement settings, is done in the config file or the API.

function RuleRow({ plan, index, stats }: { plan: TrackingPlan; index: number; stats: RuleStats | undefined }) {
  const store = useAppStore();
  const rule = plan.rules[index]!;
  const [editing, setEditing] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const dirty = editing !== null && editing !== JSON.stringify(rule.jsonSchema, null, 2);
  useUnsaved(`plan-rule:${plan.id}:${index}`, dirty ? `the JSON Schema of ${rule.type}${rule.key ? ` "${rule.key}"` : ''} in ${plan.name}` : null);
  return (
    <>
      <tr data-testid="plan-rule" data-key={rule.key ?? ''} data-failed={stats?.failed ?? 0}>
        <td>{rule.type}</td>
        <td className="mono">{rule.key ?? '—'}</td>
        <td className="num">{rule.version}</td>
        <td className="num" data-testid="rule-matched">{stats?.matched ?? 0}</td>
        <td className="num" data-testid="rule-passed">{stats?.passed ?? 0}</td>
        <td className={`num${stats?.failed ? ' bad' : ''}`} data-testid="rule-failed">
          {stats?.failed ?? 0}
        </td>
        <td>
          <button type="button" className="small" data-testid="rule-edit" onClick={() => setEditing(JSON.stringify(rule.jsonSchema, null, 2))} disabled={editing !== null}>
            Edit schema
          </button>
        </td>
      </tr>
      {editing !== null ? (
        <tr>
          <td colSpan={7}>
            <textarea
              className="mono"
              data-testid="rule-schema"
              aria-label={`JSON Schema of ${rule.type} ${rule.key ?? ''}`}
              rows={12}
              spellCheck={false}
              value={editing}
              onChange={(e) => setEditing(e.target.value)}
              style={{ width: '100%' }}
            />
            <div className="row">
              <button
                type="button"
                className="primary"
                data-testid="rule-save"
                disabled={saving}
                onClick={async () => {
                  setSaving(true);
                  const ok = await store.getState().saveRuleSchema(plan.id, index, editing);
                  setSaving(false);
                  if (ok) setEditing(null);
                }}
              >
                {saving ? 'Checking…' : 'Save'}
              </button>
              <button type="button" data-testid="rule-cancel" onClick={() => setEditing(null)}>
                Cancel
              </button>
            </div>
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** Connects a source to this plan with Protocols' enforcement settings (a source has at most one plan). */
function ConnectSource({ plan }: { plan: TrackingPlan }) {
  const store = useAppStore();
  const sources = useApp((s) => s.sources);
  const [sourceId, setSourceId] = useState('');
  const [events, setEvents] = useState<'allow' | 'block'>('allow');
  const [properties, setProperties] = useState<'allow' | 'omit'>('allow');
  const [violations, setViolations] = useState<'allow' | 'block'>('allow');
  const chosen = sourceId || sources[0]?.id || '';
  if (sources.length === 0) return null;
  return (
    <div className="row wrap small-text">
      <select aria-label="Source to connect" data-testid="plan-connect-source" value={chosen} onChange={(e) => setSourceId(e.target.value)}>
        {sources.map((s) => (
          <option key={s.id} value={s.id}>
            {s.name}
          </option>
        ))}
      </select>
      <select aria-label="Unplanned events" data-testid="plan-connect-events" value={events} onChange={(e) => setEvents(e.target.value as 'allow' | 'block')}>
        <option value="allow">unplanned events: allow</option>
        <option value="block">unplanned events: block</option>
      </select>
      <select aria-label="Unplanned properties" data-testid="plan-connect-properties" value={properties} onChange={(e) => setProperties(e.target.value as 'allow' | 'omit')}>
        <option value="allow">unplanned properties: allow</option>
        <option value="omit">unplanned properties: omit</option>
      </select>
      <select aria-label="Violations" data-testid="plan-connect-violations" value={violations} onChange={(e) => setViolations(e.target.value as 'allow' | 'block')}>
        <option value="allow">violations: allow</option>
        <option value="block">violations: block</option>
      </select>
      <button
        type="button"
        data-testid="plan-connect"
        disabled={!chosen}
        onClick={() => void store.getState().connectPlan(chosen, { name: plan.name, unplannedEvents: events, unplannedProperties: properties, violations })}
      >
        Connect
      </button>
    </div>
  );
}

/** The rules in the order the engine ranks them (the worst offenders first), with their counts. */
function ranked(plan: TrackingPlan, stats: RuleStats[] | undefined): { index: number; stats: RuleStats | undefined }[] {
  if (!stats) return plan.rules.map((_, index) => ({ index, stats: undefined }));
  // Keyed once: a plan may have 2,000 rules (a findIndex per rule was quadratic).
  const name = (r: { type: string; key?: string | null; version: number }) => `${r.type}\u001f${r.key ?? ''}\u001f${r.version}`;
  const indexOf = new Map(plan.rules.map((r, index) => [name(r), index]));
  const placed = new Set<number>();
  const out: { index: number; stats: RuleStats | undefined }[] = [];
  for (const st of stats) {
    const index = indexOf.get(name(st));
    if (index === undefined || placed.has(index)) continue;
    placed.add(index);
    out.push({ index, stats: st });
  }
  // A rule the counts do not name yet (just added): after the others.
  plan.rules.forEach((_, index) => {
    if (!placed.has(index)) out.push({ index, stats: undefined });
  });
  return out;
}

/** Rules a plan card lists before "Show all": the worst offenders come first, so these are the ones to read. */
const RULES_SHOWN = 50;

function PlanCard({ plan }: { plan: TrackingPlan }) {
  const store = useAppStore();
  const [confirming, setConfirming] = useState(false);
  const stats = useApp((s) => s.planStats[plan.id]);
  const [all, setAll] = useState(false);
  const order = ranked(plan, stats);
  const shown = all ? order : order.slice(0, RULES_SHOWN);
  return (
    <section className="card" data-testid="plan-card" data-name={plan.name}>
      <header className="row">
        <h3 className="grow">
          {plan.name} <span className="muted small-text">{countOf(plan.rules.length, 'rule')} · updated {formatDateTime(plan.updatedAt)}</span>
        </h3>
        {confirming ? (
          <>
            <button type="button" className="danger" data-testid="plan-delete-confirm" onClick={() => void store.getState().deletePlan(plan.id)}>
              Delete plan
            </button>
            <button type="button" data-testid="plan-delete-cancel" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </>
        ) : (
          <button type="button" data-testid="plan-delete" onClick={() => setConfirming(true)}>
            Delete…
          </button>
        )}
      </header>
      {plan.problem ? (
        <div className="notice error" role="alert" data-testid="plan-problem">
          {`This plan does not compile: ${plan.problem}. Its sources' calls are not checked until it is saved with rules that compile.`}
        </div>
      ) : null}
      <div className="small-text muted" data-testid="plan-sources">
        {plan.sources.length ? 'Checks: ' : 'No source is connected.'}
        {plan.sources.map((s) => (
          <span key={s.sourceId} className="plan-source">
            {`${s.sourceName} (unplanned events ${s.unplannedEvents}, unplanned properties ${s.unplannedProperties}, violations ${s.violations}) `}
            <button type="button" className="small" data-testid="plan-disconnect" onClick={() => void store.getState().connectPlan(s.sourceId, null)}>
              Disconnect
            </button>{' '}
          </span>
        ))}
      </div>
      <ConnectSource plan={plan} />
      <table className="kv plan-rules" data-testid="plan-rules">
        <thead>
          <tr>
            <th>type</th>
            <th>key</th>
            {/* Numbers are right-aligned: so are their headings, each over its own column. */}
            <th className="num">version</th>
            <th className="num" title="Calls checked against this rule in the last hour">
              matched
            </th>
            <th className="num">passed</th>
            <th className="num">failed</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {shown.map(({ index, stats: s }) => {
            const r = plan.rules[index]!;
            return <RuleRow key={`${r.type}-${r.key ?? ''}-${r.version}`} plan={plan} index={index} stats={s} />;
          })}
        </tbody>
      </table>
      {order.length > RULES_SHOWN ? (
        <div className="row small-text muted">
          {all ? `All ${order.length.toLocaleString('en-US')} rules.` : `The ${RULES_SHOWN} worst offenders of ${order.length.toLocaleString('en-US')} rules.`}
          <button type="button" className="small" data-testid="plan-rules-toggle" onClick={() => setAll(!all)}>
            {all ? `Show the first ${RULES_SHOWN}` : `Show all ${order.length.toLocaleString('en-US')} rules`}
          </button>
        </div>
      ) : null}
    </section>
  );
}

export function PlansScreen() {
  const store = useAppStore();
  const { plans, error, loadError } = useAppShallow((s) => ({ plans: s.plans, error: s.plansError, loadError: s.plansLoadError }));
  const sources = useApp((s) => s.sources);
  const [replace, setReplace] = useState(false);
  const [draftSource, setDraftSource] = useState('');
  const fileInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    void store.getState().loadPlans();
  }, [store]);
  const source = draftSource || sources[0]?.id || '';
  return (
    <div className="screen plans-screen" data-testid="screen-plans">
      <div className="row wrap">
        <button type="button" data-testid="plans-import" onClick={() => fileInput.current?.click()}>
          Import plan file…
        </button>
        <input
          ref={fileInput}
          type="file"
          accept=".json,application/json"
          hidden
          data-testid="plans-import-file"
          onChange={async (e) => {
            const file = e.target.files?.[0];
            e.target.value = '';
            if (file) await store.getState().importPlanFile(await file.text(), replace);
          }}
        />
        <label className="small-text" title="Replace a plan of the same name instead of refusing the file">
          <input type="checkbox" data-testid="plans-import-replace" checked={replace} onChange={(e) => setReplace(e.target.checked)} /> replace a plan of that name
        </label>
        <span className="grow" />
        <select aria-label="Source to draft a plan from" data-testid="plans-draft-source" value={source} onChange={(e) => setDraftSource(e.target.value)}>
          {sources.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
        <button type="button" data-testid="plans-draft" disabled={!source} onClick={() => void store.getState().draftPlanFrom(source)} title="A plan listing the events and properties this source's calls had, typed as seen">
          Draft a plan from its calls
        </button>
      </div>
      {error ? (
        <div className="notice error" role="alert" data-testid="plans-error">
          {error.message}
        </div>
      ) : null}
      {loadError ? <LoadError what="tracking plans" error={loadError} onRetry={() => void store.getState().loadPlans()} testId="plans-load-error" /> : null}
      {plans.length === 0 && loadError ? null : plans.length === 0 ? (
        <EmptyState title="No tracking plan yet" testId="plans-empty">
          Import a plan file (Segment's Public API rules, or Typewriter's plan.json), or draft one from a source's calls. See docs/tracking-plans.md.
        </EmptyState>
      ) : (
        plans.map((p) => <PlanCard key={p.id} plan={p} />)
      )}
    </div>
  );
}
