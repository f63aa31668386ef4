import type { Store } from '../../store/store';
import { isPlainObject } from '../../../../shared/message-rules';
import type { JsonObject } from '../../../../shared/types';
import type { Profile } from './rules';

interface Row {
  id: number;
  user_id: string;
  type: 'identify' | 'track';
  label: string | null;
  received_at: number;
  ts: number | null;
  request_id: number;
  batch_index: number | null;
  /** The stored normalized form's traits / properties; null when the call's form is rebuilt from its request. */
  traits: string | null;
  props: string | null;
  stored: 0 | 1;
}

/**
 * Profiles per userId from accepted identify and track calls. The app's own calls (paths under
 * /internal/: audience syncs, deletion notices) are left out, so a sync never feeds its own output
 * back into the rules. Anonymous-only calls have no userId and build no profile.
 *
 * `propertiesOf` names the one event whose properties are parsed (for a last_property trait);
 * everything else reads only names and times, which keeps a 200k-call history cheap.
 */
export function loadProfiles(store: Store, opts: { propertiesOf?: string } = {}): Map<string, Profile> {
  // In pages by id: reading a call's item from its request needs the connection, which an open
  // iterator would hold.
  const page = store.db.prepare(
    `SELECT c.id, c.user_id, c.type, c.label, c.received_at, c.timestamp AS ts, c.request_id, c.batch_index, c.normalized IS NOT NULL AS stored,
       CASE WHEN c.type = 'identify' THEN json_extract(c.normalized, '$.traits') END AS traits,
       CASE WHEN c.type = 'track' AND c.label = @event THEN json_extract(c.normalized, '$.properties') END AS props
     FROM calls c JOIN requests r ON r.id = c.request_id
     WHERE c.id > @after AND c.status = 'accepted' AND c.user_id IS NOT NULL AND c.type IN ('identify', 'track')
       AND json_extract(r.meta, '$.path') NOT LIKE '/internal/%'
     ORDER BY c.id LIMIT 5000`,
  );
  const event = opts.propertiesOf ?? null;
  // The collector's calls keep traits and properties as sent (normalizing copies them unchanged).
  const own = (r: Row, field: 'traits' | 'properties'): JsonObject | undefined => {
    const item = store.requests.item(r.request_id, r.batch_index);
    const v = isPlainObject(item) ? item[field] : undefined;
    return isPlainObject(v) ? (v as JsonObject) : undefined;
  };

  const profiles = new Map<string, Profile>();
  for (let after = 0; ; ) {
    const rows = page.all({ event, after }) as Row[];
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
    if (rows.length < 5000) break;
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
