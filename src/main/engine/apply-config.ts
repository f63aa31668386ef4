import type { Config } from '../../shared/config.schema';
import type { Store } from './store/store';

/**
 * Idempotent: sources are matched by name; a write key or webhook settings given in the file
 * replace the stored ones, anything not given is left as it is. Run it twice, get the same state.
 * Returns the ids of sources whose Webhooks the file turned off: the caller cancels their
 * unfinished deliveries, as turning Webhooks off anywhere else does (README, Decisions).
 */
export function applyConfig(store: Store, config: Config, now: number): string[] {
  const turnedOff: string[] = [];
  for (const s of config.sources) {
    // Already parsed by the config schema (defaults applied), as the Config type says.
    const existing = store.sources.byName(s.name);
    if (existing) {
      const wasOn = existing.webhooks.enabled;
      const updated = store.sources.update(existing.id, { writeKey: s.writeKey, webhooks: s.webhooks, collectorFaults: s.collectorFaults });
      if (wasOn && !updated.webhooks.enabled) turnedOff.push(existing.id);
    } else store.sources.create({ name: s.name, writeKey: s.writeKey, webhooks: s.webhooks, collectorFaults: s.collectorFaults }, now);
  }
  if (Object.keys(config.settings).length > 0) store.settings.apply(config.settings);
  return turnedOff;
}

export const CONFIG_TURNED_OFF = 'canceled: Webhooks was turned off for its source (config file)';
