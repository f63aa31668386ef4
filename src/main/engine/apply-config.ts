import type { Config } from '../../shared/config.schema';
import type { Store } from './store/store';

/**
 * Idempotent: sources are matched by name; a write key or webhook settings given in the file
 * replace the stored ones, anything not given is left as it is. Run it twice, get the same state.
 */
export function applyConfig(store: Store, config: Config, now: number): void {
  for (const s of config.sources) {
    // Already parsed by the config schema (defaults applied), as the Config type says.
    const existing = store.sources.byName(s.name);
    if (existing) store.sources.update(existing.id, { writeKey: s.writeKey, webhooks: s.webhooks, collectorFaults: s.collectorFaults });
    else store.sources.create({ name: s.name, writeKey: s.writeKey, webhooks: s.webhooks, collectorFaults: s.collectorFaults }, now);
  }
  if (Object.keys(config.settings).length > 0) store.settings.apply(config.settings);
}
