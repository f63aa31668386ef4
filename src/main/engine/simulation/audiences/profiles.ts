import type { Db } from '../../store/database';
import type { JsonObject } from '../../../../shared/types';
import type { Profile } from './rules';

interface Row {
  user_id: string;
  type: 'identify' | 'track';
  label: string | null;
  received_at: number;
  ts: string | null;
  traits: string | null;
  props: string | null;
}

/**
 * Profiles per userId from accepted identify and track calls. The app's own calls (paths under
 * /internal/: audience syncs, deletion notices) are left out, so a sync never feeds its own output
 * back into the rules. Anonymous-only calls have no userId and build no profile.
 *
 * `propertiesOf` names the one event whose properties are parsed (for a last_property trait);
 * everything else reads only names and times, which keeps a 200k-call history cheap.
 */
export function loadProfiles(db: Db, opts: { propertiesOf?: string } = {}): Map<string, Profile> {
  const rows = db
    .prepare(
      `SELECT c.user_id, c.type, c.label, c.received_at, json_extract(c.normalized, '$.timestamp') AS ts,
         CASE WHEN c.type = 'identify' THEN json_extract(c.normalized, '$.traits') END AS traits,
         CASE WHEN c.type = 'track' AND c.label = @event THEN json_extract(c.normalized, '$.properties') END AS props
       FROM calls c JOIN requests r ON r.id = c.request_id
       WHERE c.status = 'accepted' AND c.user_id IS NOT NULL AND c.type IN ('identify', 'track')
         AND json_extract(r.meta, '$.path') NOT LIKE '/internal/%'
       ORDER BY c.id`,
    )
    .iterate({ event: opts.propertiesOf ?? null }) as IterableIterator<Row>;

  const profiles = new Map<string, Profile>();
  for (const r of rows) {
    let p = profiles.get(r.user_id);
    if (!p) profiles.set(r.user_id, (p = { userId: r.user_id, traits: {}, events: [] }));
    if (r.type === 'identify') {
      // Arrival order: the most recently received identify wins, key by key.
      const traits = parseObject(r.traits);
      if (traits) Object.assign(p.traits, traits);
    } else if (r.label !== null) {
      const at = r.ts ? Date.parse(r.ts) : NaN;
      const props = r.props ? parseObject(r.props) : undefined;
      p.events.push({ name: r.label, at: Number.isNaN(at) ? r.received_at : at, ...(props ? { properties: props } : {}) });
    }
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
