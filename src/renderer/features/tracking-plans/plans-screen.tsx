import { useEffect, useRef, useState } from 'react';
import { MAX_PLAN_NAME_CHARS, type RuleStats, type TrackingPlan, type TrackingPlanConnection } from '../../../shared/tracking-plan.schema';
import { EmptyState } from '../../components/field';
import { countOf, formatDateTime } from '../../components/format';
import { useApp, useAppShallow, useAppStore } from '../../store-context';
import { LoadError } from '../../components/load-error';
import { useUnsaved } from '../../components/leave-dialog';
import { tabHref } from '../../screens';

// Tracking plans (issue 24, docs/tracking-plans.md): import a plan file, make a draft from a source's
// calls, read each plan's rules and the sources checked against it, edit a rule's JSON Schema (the
// engine compiles it before saving and says why it does not), delete a plan. Connecting a source, with
// its enforcement settings, is done on the plan's card (or in the config file, or the API).

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

type Settings = Pick<TrackingPlanConnection, 'unplannedEvents' | 'unplannedProperties' | 'violations'>;
const DEFAULTS: Settings = { unplannedEvents: 'allow', unplannedProperties: 'allow', violations: 'allow' };

/** A source's plan and settings now (a source has at most one plan), from the plans the screen holds. */
function connectionOf(plans: TrackingPlan[], sourceId: string): { plan: TrackingPlan; settings: Settings } | null {
  for (const plan of plans) {
    const c = plan.sources.find((x) => x.sourceId === sourceId);
    if (c) return { plan, settings: { unplannedEvents: c.unplannedEvents, unplannedProperties: c.unplannedProperties, violations: c.violations } };
  }
  return null;
}

/**
 * Connects a source to this plan with Protocols' enforcement settings (a source has at most one plan).
 * The form shows the chosen source as it is: its settings when it is connected, and where to.
 */
function ConnectSource({ plan }: { plan: TrackingPlan }) {
  const sources = useApp((s) => s.sources);
  const plans = useApp((s) => s.plans);
  const [sourceId, setSourceId] = useState('');
  const chosen = sources.some((s) => s.id === sourceId) ? sourceId : (sources[0]?.id ?? '');
  if (sources.length === 0) return null;
  const now = connectionOf(plans, chosen);
  return (
    <div className="row wrap small-text" data-testid="plan-connect-form">
      <select aria-label="Source to connect" data-testid="plan-connect-source" value={chosen} onChange={(e) => setSourceId(e.target.value)}>
        {sources.map((s) => (
          <option key={s.id} value={s.id}>
            {s.name}
          </option>
        ))}
      </select>
      {/* Keyed by the source and what it has now: choosing another source, or a change made elsewhere, shows that one's settings. */}
      <ConnectSettings key={`${chosen}:${now?.plan.id ?? ''}:${JSON.stringify(now?.settings ?? null)}`} plan={plan} sourceId={chosen} now={now} />
    </div>
  );
}

function ConnectSettings({ plan, sourceId, now }: { plan: TrackingPlan; sourceId: string; now: { plan: TrackingPlan; settings: Settings } | null }) {
  const store = useAppStore();
  const [settings, setSettings] = useState<Settings>(now?.settings ?? DEFAULTS);
  const here = now?.plan.id === plan.id;
  const changed = !here || JSON.stringify(settings) !== JSON.stringify(now.settings);
  const set = (patch: Partial<Settings>) => setSettings({ ...settings, ...patch });
  return (
    <>
      <select aria-label="Unplanned events" data-testid="plan-connect-events" value={settings.unplannedEvents} onChange={(e) => set({ unplannedEvents: e.target.value as Settings['unplannedEvents'] })}>
        <option value="allow">unplanned events: allow</option>
        <option value="block">unplanned events: block</option>
      </select>
      <select aria-label="Unplanned properties" data-testid="plan-connect-properties" value={settings.unplannedProperties} onChange={(e) => set({ unplannedProperties: e.target.value as Settings['unplannedProperties'] })}>
        <option value="allow">unplanned properties: allow</option>
        <option value="omit">unplanned properties: omit</option>
      </select>
      <select aria-label="Violations" data-testid="plan-connect-violations" value={settings.violations} onChange={(e) => set({ violations: e.target.value as Settings['violations'] })}>
        <option value="allow">violations: allow</option>
        <option value="block">violations: block</option>
      </select>
      <button type="button" data-testid="plan-connect" disabled={!sourceId || !changed || plan.problem !== undefined} title={plan.problem ? 'This plan does not compile: save its rules first' : undefined} onClick={() => void store.getState().connectPlan(sourceId, { name: plan.name, ...settings })}>
        {here ? 'Save settings' : now ? 'Move to this plan' : 'Connect'}
      </button>
      <span className="muted" data-testid="plan-connect-state">
        {here ? (changed ? 'Connected to this plan; the settings above are not saved yet.' : 'Connected to this plan with these settings.') : now ? `Checked against "${now.plan.name}" now: a source has one plan.` : 'Not connected to a plan.'}
      </span>
    </>
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

/** What the plan's enforcement kept out in the last hour: its blocked calls (one click to list them) and the events it does not plan. */
function OffPlan({ plan }: { plan: TrackingPlan }) {
  const store = useAppStore();
  const off = useApp((s) => s.planOffPlan[plan.id]);
  if (!off || (off.blocked === 0 && off.unplannedEvents.length === 0)) return null;
  // As Compose's "find it" does: past an unsaved edit's question, the filters, then the address.
  const showBlocked = () =>
    store.getState().guardLeave(() => {
      const s = store.getState();
      s.clearInspectorFilters();
      s.setFilters({ status: 'blocked', sourceId: plan.sources[0]?.sourceId });
      location.hash = tabHref('inspector');
    });
  return (
    <div className="small-text" data-testid="plan-off-plan">
      <span>Last hour: </span>
      <span data-testid="plan-blocked-count">{countOf(off.blocked, 'call')} blocked</span>
      {/* Listed only when they are one source's: the inspector filters by source, not by plan. */}
      {off.blocked > 0 && plan.sources.length === 1 ? (
        <>
          {' '}
          <button type="button" className="small" data-testid="plan-show-blocked" onClick={showBlocked}>
            Show in the Inspector
          </button>
        </>
      ) : null}
      {off.unplannedEvents.length > 0 ? (
        <span data-testid="plan-unplanned">
          {' · unplanned events: '}
          {off.unplannedEvents.map((e) => `"${e.event}" (${countOf(e.calls, 'call')})`).join(', ')}
          {off.more > 0 ? ` and ${countOf(off.more, 'other')}` : ''}
        </span>
      ) : null}
    </div>
  );
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
      <OffPlan plan={plan} />
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

/** A file picked to import that names no plan: its text and the name the form proposes. */
interface Unnamed {
  text: string;
  fileName: string;
  /** Which pick this is (NameImport is keyed by it). */
  pick: number;
}
let picks = 0;

/** The plan name a file's name suggests: "shop-plan.json" → "shop-plan". */
export function nameFromFile(fileName: string): string {
  return fileName.replace(/\.json$/i, '').trim().slice(0, MAX_PLAN_NAME_CHARS).trim() || 'Imported plan';
}

/** Asks for the name of a plan whose file names none (a Segment rules file), prefilled from the file's name. */
function NameImport({ unnamed, replace, onDone }: { unnamed: Unnamed; replace: boolean; onDone: () => void }) {
  const store = useAppStore();
  const [name, setName] = useState(nameFromFile(unnamed.fileName));
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  const submit = async () => {
    setBusy(true);
    const ok = await store.getState().importPlanFile(unnamed.text, replace, name.trim());
    setBusy(false);
    if (ok === true) onDone();
  };
  return (
    <form
      className="card row wrap"
      data-testid="plans-import-name-form"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <label className="grow" htmlFor="plans-import-name">
        {`${unnamed.fileName} names no plan (Segment's rules files do not). Name it:`}
      </label>
      <input id="plans-import-name" ref={input} data-testid="plans-import-name" value={name} maxLength={MAX_PLAN_NAME_CHARS} onChange={(e) => setName(e.target.value)} />
      <button type="submit" className="primary" data-testid="plans-import-name-submit" disabled={busy || !name.trim()}>
        {busy ? 'Importing…' : 'Import'}
      </button>
      <button type="button" data-testid="plans-import-name-cancel" onClick={onDone}>
        Cancel
      </button>
    </form>
  );
}

export function PlansScreen() {
  const store = useAppStore();
  const { plans, error, loadError } = useAppShallow((s) => ({ plans: s.plans, error: s.plansError, loadError: s.plansLoadError }));
  const sources = useApp((s) => s.sources);
  const [replace, setReplace] = useState(false);
  const [draftSource, setDraftSource] = useState('');
  const [unnamed, setUnnamed] = useState<Unnamed | null>(null);
  const importButton = useRef<HTMLButtonElement>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  useEffect(() => {
    void store.getState().loadPlans();
  }, [store]);
  const source = draftSource || sources[0]?.id || '';
  return (
    <div className="screen plans-screen" data-testid="screen-plans">
      <header className="screen-header">
        <h1>Tracking plans</h1>
      </header>
      <div className="row wrap">
        <button ref={importButton} type="button" data-testid="plans-import" onClick={() => fileInput.current?.click()}>
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
            if (!file) return;
            const text = await file.text();
            setUnnamed(null);
            if ((await store.getState().importPlanFile(text, replace)) === 'unnamed') setUnnamed({ text, fileName: file.name, pick: ++picks });
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
      {unnamed ? (
        // Keyed by the pick: a second file chosen while the form shows gets its own proposed name.
        <NameImport
          key={unnamed.pick}
          unnamed={unnamed}
          replace={replace}
          onDone={() => {
            setUnnamed(null);
            importButton.current?.focus();
          }}
        />
      ) : null}
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
