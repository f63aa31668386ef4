import { useState } from 'react';
import { MAX_ROUNDS, RETRY_PRESETS, plannedOffsets, plansTooManyRounds, resolveRetrySchedule } from '../../../shared/retry-schedule';
import type { Settings } from '../../../shared/types';
import { userAgentOf } from '../../../shared/webhook-request';
import { Field } from '../../components/field';
import { countOf, formatDuration } from '../../components/format';
import { useApp, useAppStore } from '../../store-context';
import { ConfigIo } from '../../components/config-io';
import { schedulePatch } from './schedule-patch';
import { TimeWarpControl } from '../../components/time-warp';
import { setThemeChoice, THEME_CHOICES, THEME_LABELS, useTheme, type ThemeChoice } from '../../theme';

/** This window's theme: applied at once and remembered here (not an engine setting). */
function ThemeControl() {
  const { choice, scheme } = useTheme();
  return (
    <section className="settings-live" data-testid="settings-theme">
      <Field label="Theme" name="theme" hint={choice === 'system' ? `the system's: ${scheme} now` : 'remembered in this browser or window'}>
        <select data-testid="set-theme" value={choice} onChange={(e) => setThemeChoice(e.target.value as ThemeChoice)}>
          {THEME_CHOICES.map((c) => (
            <option key={c} value={c}>
              {THEME_LABELS[c]}
            </option>
          ))}
        </select>
      </Field>
    </section>
  );
}

function SettingsForm({ settings }: { settings: Settings }) {
  const store = useAppStore();
  const formError = useApp((s) => s.settingsFormError);
  const [payloadFormat, setPayloadFormat] = useState(settings.payloadFormat);
  const [aliasKeys, setAliasKeys] = useState(settings.aliasKeys);
  const [ua, setUa] = useState(settings.userAgentProduct);
  const [preset, setPreset] = useState(settings.retrySchedule.preset);
  const [delays, setDelays] = useState(settings.retrySchedule.delaysMs.map((d) => d / 1000).join(', '));
  const [strict, setStrict] = useState(settings.strict);
  const [retention, setRetention] = useState(String(settings.retentionCalls));
  const [rotationHours, setRotationHours] = useState(String(settings.secretRotationWindowMs / 3_600_000));
  const [delaysError, setDelaysError] = useState<string | null>(null);
  const err = (p: string) => formError?.fieldMessage(p);

  const customDelays = (): number[] | null => {
    const parts = delays.split(/[\s,]+/).filter(Boolean).map(Number);
    return parts.length && parts.every((n) => Number.isFinite(n) && n >= 0) ? parts.map((n) => Math.round(n * 1000)) : null;
  };
  const preview = (() => {
    const d = preset === 'custom' ? customDelays() : null;
    if (preset === 'custom' && !d) return null;
    const schedule = resolveRetrySchedule(schedulePatch(settings.retrySchedule, preset, d));
    const offsets = plannedOffsets(schedule);
    const scale = settings.timeScale;
    const count = plansTooManyRounds(schedule, offsets) ? `${MAX_ROUNDS.toLocaleString('en-US')} attempts (the most a delivery makes, before its window ends)` : countOf(offsets.length, 'attempt');
    return `${count} over ${formatDuration(offsets[offsets.length - 1])} simulated` + (scale !== 1 ? ` = ${formatDuration(offsets[offsets.length - 1] / scale)} real at ×${scale}` : '');
  })();

  return (
    <form
      className="settings-form"
      noValidate
      data-testid="settings-form"
      onSubmit={async (e) => {
        e.preventDefault();
        const d = preset === 'custom' ? customDelays() : null;
        if (preset === 'custom' && !d) {
          setDelaysError('seconds separated by commas, e.g. 5, 10, 30');
          return;
        }
        // What the form does not show (jitter, window, timeout, retry rule) is kept: schedule-patch.ts.
        const retrySchedule = schedulePatch(settings.retrySchedule, preset, d);
        setDelaysError(null);
        await store.getState().saveSettings({
          payloadFormat,
          aliasKeys,
          userAgentProduct: ua,
          retrySchedule,
          strict,
          retentionCalls: Number(retention),
          secretRotationWindowMs: rotationHours.trim() === '' ? Number.NaN : Math.round(Number(rotationHours) * 3_600_000),
        });
      }}
    >
      <Field label="Payload format" name="payloadFormat" error={err('payloadFormat')} hint="full adds anonymousId, messageId, integrations and the timestamps; documented sends exactly the documented fields">
        <select data-testid="set-payload-format" value={payloadFormat} onChange={(e) => setPayloadFormat(e.target.value as Settings['payloadFormat'])}>
          <option value="full">full</option>
          <option value="documented">documented</option>
        </select>
      </Field>
      <Field label="Alias body keys" name="aliasKeys" error={err('aliasKeys')} hint='both sends previousId and "Previous ID"/"User ID"; documented only the spaced keys the service documents; camel only previousId, as Segment’s own end-to-end fixtures expect'>
        <select data-testid="set-alias-keys" value={aliasKeys} onChange={(e) => setAliasKeys(e.target.value as Settings['aliasKeys'])}>
          <option value="both">both</option>
          <option value="documented">documented ("Previous ID", "User ID")</option>
          <option value="camel">camel (previousId)</option>
        </select>
      </Field>
      <Field label="User-Agent product" name="userAgentProduct" error={err('userAgentProduct')} hint={`sent as User-Agent: ${ua.trim() ? userAgentOf(ua) : '…'}`}>
        <input data-testid="set-ua" value={ua} onChange={(e) => setUa(e.target.value)} spellCheck={false} />
      </Field>
      <Field label="Retry schedule" name="retrySchedule" error={err('retrySchedule.preset') ?? err('retrySchedule')} hint={preview ?? undefined}>
        <select data-testid="set-preset" value={preset} onChange={(e) => setPreset(e.target.value)}>
          {Object.entries(RETRY_PRESETS).map(([k, p]) => (
            <option key={k} value={k}>
              {k}: {p.label}
            </option>
          ))}
          <option value="custom">custom…</option>
        </select>
      </Field>
      {preset === 'custom' ? (
        <Field label="Delays between attempts (seconds)" name="retrySchedule.delaysMs" error={delaysError ?? err('retrySchedule.delaysMs')} hint="the last delay repeats until the window ends" wide>
          <input data-testid="set-delays" value={delays} onChange={(e) => setDelays(e.target.value)} />
        </Field>
      ) : null}
      <Field label="Strict mode" name="strict" error={err('strict')} hint="unknown write key → 401; an invalid call → 400 naming it, and nothing of that request is stored">
        <input type="checkbox" data-testid="set-strict" checked={strict} onChange={(e) => setStrict(e.target.checked)} />
      </Field>
      <Field label="Keep at most (calls)" name="retentionCalls" error={err('retentionCalls')} hint="older calls and their attempts are deleted">
        <input type="number" min={100} data-testid="set-retention" value={retention} onChange={(e) => setRetention(e.target.value)} />
      </Field>
      <Field
        label="Rotation window (hours)"
        name="secretRotationWindowMs"
        error={err('secretRotationWindowMs')}
        hint="after a secret is rotated (Destinations), Standard Webhooks requests carry the old secret's signature too for this long, so receivers can switch; 0 = at once"
      >
        <input type="number" step="any" min={0} data-testid="set-rotation-window" value={rotationHours} onChange={(e) => setRotationHours(e.target.value)} />
      </Field>
      {formError && !formError.fields.length ? <div className="notice error">{formError.message}</div> : null}
      <div className="actions">
        <button type="submit" className="primary" data-testid="settings-save">
          Save settings
        </button>
      </div>
    </form>
  );
}

export function SettingsScreen() {
  const settings = useApp((s) => s.settings);
  const error = useApp((s) => s.settingsError);
  return (
    <div className="screen settings-screen" data-testid="screen-settings">
      <header className="screen-header">
        <h1>Settings</h1>
      </header>
      {error ? <div className="notice error">Could not load settings: {error}</div> : null}
      <ThemeControl />
      {settings ? (
        <section className="settings-live">
          {/* The one time-warp control (the form below had a second, saved with it: issue 40). */}
          <h3>Time-warp (applies at once)</h3>
          <p className="muted small-text">Divides retry delays only; request timeouts (5 s, 10 s for Actions and the actions preset) stay real. 1 = real time.</p>
          <TimeWarpControl testId="settings-time-warp" />
        </section>
      ) : null}
      {settings ? <SettingsForm key={JSON.stringify(settings)} settings={settings} /> : error ? null : <div className="muted">Loading…</div>}
      <ConfigIo />
    </div>
  );
}
