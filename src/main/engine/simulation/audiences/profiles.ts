import type { Store } from '../../store/store';
import { ACTIVITY_PAGE, type ActivityRow } from '../../store/user-activity';
import { isPlainObject } from '../../../../shared/message-rules';
import type { JsonObject } from '../../../../shared/types';
import type { Profile } from './rules';

/**
 * Profiles per userId from accepted identify and track calls (store.activity: the app's own calls
 * under /internal/ are left out, so a sync never feeds its own output back into the rules).
 * Anonymous-only calls have no userId and build no profile.
 *
 * `propertiesOf` names the one event whose properties are parsed (for a last_property trait);
 * everything else reads only names and times, which keeps a 200k-call history cheap.
 */
export function loadProfiles(store: Store, opts: { propertiesOf?: string } = {}): Map<string, Profile> {
  const event = opts.propertiesOf ?? null;
  // The collector's calls keep traits and properties as sent (normalizing copies them unchanged).
  const own = (r: ActivityRow, field: 'traits' | 'properties'): JsonObject | undefined => {
    const item = store.requests.item(r.request_id, r.batch_index);
    const v = isPlainObject(item) ? item[field] : undefined;
    return isPlainObject(v) ? (v as JsonObject) : undefined;
  };

  const profiles = new Map<string, Profile>();
  for (let after = 0; ; ) {
    const rows = store.activity.pageAfter(after, event);
    for (const r of rows) {
      let p = profiles.get(r.user_id);
      if (!p) profiles.set(r.user_id, (p = { userId: r.user_id, traits: {}, events: [] }));
      if (r.type === 'identify') {
        // Arrival order: the most recently received identify wins, key by key.
        const traits = r.stored ? parseObject(r.traits) : own(r, 'traits');
        if (traits) Object.assign(p.traits, traits);
      } else if (r.label !== null) {
        const wanted = r.label === event;
        const props = !wanted ? undefined : r.stored ? parseObject(r.props) : own(r, 'properties');
        p.events.push({ name: r.label, at: r.ts ?? r.received_at, ...(props ? { properties: props } : {}) });
      }
    }
    if (rows.length < ACTIVITY_PAGE) break;
    after = rows[rows.length - 1].id;
  }
  // Events by their own time (historical imports arrive late); the sort is stable for equal times.
  for (const p of profiles.values()) p.events.sort((a, b) => a.at - b.at);
  return profiles;
}

function parseObject(text: string | null): JsonObject | undefined {
  if (!text) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}
