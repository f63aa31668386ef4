import type { Settings } from '../../../shared/types';
import { compactRetrySchedule, resolveRetrySchedule } from '../../../shared/retry-schedule';
import type { SettingsPatch } from '../../../shared/settings.schema';
import { DEFAULT_USER_AGENT_PRODUCT } from '../../../shared/webhook-request';
import type { Db } from './database';

export const DEFAULT_SETTINGS: Settings = {
  payloadFormat: 'full',
  aliasKeys: 'both',
  userAgentProduct: DEFAULT_USER_AGENT_PRODUCT,
  retrySchedule: resolveRetrySchedule({ preset: 'default' }),
  timeScale: 1,
  strict: false,
  retentionCalls: 200_000,
  secretRotationWindowMs: 24 * 3_600_000,
};

/** Settings live in memory (read on every request) and are written through as key/value rows. */
export class SettingsRepo {
  private current: Settings;
  private readonly upsert;

  /** onWindowChange: the secret rotation window changes (inside the write), so rotations it closed stay closed. */
  constructor(
    private readonly db: Db,
    private readonly onWindowChange: (fromMs: number, toMs: number) => void = () => {},
  ) {
    this.upsert = db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value');
    // Other features keep their own rows in this table (see getExtra); only Settings keys are read here.
    const stored = Object.fromEntries(
      (db.prepare('SELECT key, value FROM settings').all() as { key: string; value: string }[])
        .filter((r) => Object.hasOwn(DEFAULT_SETTINGS, r.key))
        .map((r) => [r.key, JSON.parse(r.value)]),
    );
    // Read through the same resolution a write gets: a preset an older build let in ("constructor",
    // stored without delays) reads as the default instead of jamming every retry.
    if ('retrySchedule' in stored) {
      const r: unknown = stored.retrySchedule;
      stored.retrySchedule = resolveRetrySchedule(typeof r === 'object' && r !== null && typeof (r as { preset?: unknown }).preset === 'string' ? (r as never) : { preset: 'default' });
    }
    this.current = { ...DEFAULT_SETTINGS, ...stored };
  }

  /** A feature's own JSON row (e.g. the app client's settings), outside the Settings object. */
  getExtra<T>(key: string): T | undefined {
    const row = this.db.prepare('SELECT value FROM settings WHERE key = ?').get(`x:${key}`) as { value: string } | undefined;
    return row ? (JSON.parse(row.value) as T) : undefined;
  }

  setExtra(key: string, value: unknown): void {
    this.upsert.run(`x:${key}`, JSON.stringify(value));
  }

  get(): Settings {
    return this.current;
  }

  /** Puts the settings back as they were (a transaction that wrote them rolled back: Store.transaction). */
  restore(settings: Settings): void {
    this.current = settings;
  }

  apply(patch: SettingsPatch): Settings {
    const next: Settings = { ...this.current };
    for (const [key, value] of Object.entries(patch)) {
      if (value === undefined) continue;
      (next as unknown as Record<string, unknown>)[key] = key === 'retrySchedule' ? resolveRetrySchedule(value as never) : value;
    }
    const before = this.current.secretRotationWindowMs;
    this.db.transaction(() => {
      // A named preset is stored as its name and what differs from it (compactRetrySchedule).
      for (const [key, value] of Object.entries(next)) this.upsert.run(key, JSON.stringify(key === 'retrySchedule' ? compactRetrySchedule(next.retrySchedule) : value));
      // A rotation window closed by the old setting or the new one stays closed (source-secrets.ts).
      if (next.secretRotationWindowMs !== before) this.onWindowChange(before, next.secretRotationWindowMs);
    })();
    this.current = next;
    return next;
  }
}
