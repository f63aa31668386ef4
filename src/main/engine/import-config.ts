import { randomUUID } from 'node:crypto';
import type { Config } from '../../shared/config.schema';
import type { Source } from '../../shared/types';
import type { Store } from './store/store';
import type { TrackingPlans } from './tracking-plans/service';
import { applyConfig, planConfig, type ConfigApplied } from './apply-config';
import type { LabAddresses } from './config-receivers';
import { Pace } from './simulation/export-slices';
import { backgroundSlices } from './slice-meter';
import { codedError } from './errors';

// A config imported into a running lab (POST /api/config, the UI's Import), issue 38. The collector,
// the control API and the dispatcher share one event loop, and one SQLite transaction is one stretch
// of it: 10,000 new sources written in one held the loop for a third of a second on an idle machine.
// So the sources the config creates are written first, in slices that each take about SLICE_MS, with
// the loop's other work between them; then the one transaction that commits the import makes them
// sources, with everything else the config changes. Whole or not at all still: until that
// transaction they are not sources (not in memory, their rows marked with the import), their names
// and write keys are reserved, and if it does not commit (refused meanwhile, an error, a crash) their
// rows are deleted (sources.repo.ts). A lab's start applies its config in one transaction, as before:
// nothing else runs yet.

/** About how long one slice of writes may hold the loop. */
export const SLICE_MS = 10;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The lab stopped before the import committed: nothing of it is kept (its client got no answer, or this one). */
export const stoppedImport = () => codedError('unavailable', 'the lab is stopping: the config import was not applied; nothing of it was kept');

/** `stopped`: the lab is stopping and the import's client will get no answer: it is not committed (engine.stop, a cut at the control API's close). */
export async function importConfig(store: Store, plans: TrackingPlans, config: Config, now: number, lab: LabAddresses, turn: () => Promise<void> = nextTurn, stopped: () => boolean = () => false): Promise<ConfigApplied> {
  const nextOrStop = async () => {
    await turn();
    if (stopped()) throw stoppedImport();
  };
  // Checked before anything is written: a config that is refused writes nothing.
  const plan = backgroundSlices.time('config import (check)', () => planConfig(store, plans, config, now, lab));
  const given = config.sources.map((s, i) => ({ name: s.name, writeKey: s.writeKey, webhooks: plan.resolved.webhooks[i], collectorFaults: s.collectorFaults }));
  const fresh = given.filter((s) => !store.sources.byName(s.name));
  const receiversWere = JSON.stringify(plan.receivers.definitions());
  const importId = randomUUID();
  const planned = fresh.length > 0 ? backgroundSlices.time('config import (check)', () => store.sources.reserve(importId, fresh, now)) : [];
  const staged: Source[] = [];
  const unchanged = new Set<Source>();
  try {
    await inSlices(planned, (slice) => backgroundSlices.time('config import', () => staged.push(...store.sources.stage(importId, slice, now))), nextOrStop);
    // The stored sources it gives as they are: the transaction leaves them (a config applied again changes none).
    await inSlices(
      given,
      (slice) =>
        backgroundSlices.time('config import', () => {
          for (const s of slice) {
            const current = store.sources.byName(s.name);
            if (current && !store.sources.changes(current, s)) unchanged.add(current);
          }
        }),
      nextOrStop,
    );
    if (stopped()) throw stoppedImport();
    // Checked again with the transaction, as what is stored may have changed meanwhile.
    return backgroundSlices.time('config import (commit)', () => applyConfig(store, plans, config, now, lab, { importId, sources: staged, unchanged, receiversWere }));
  } catch (err) {
    await inSlices(
      staged.map((s) => s.id),
      (ids) => backgroundSlices.time('config import (undone)', () => store.sources.unstage(ids)),
      turn,
    );
    throw err;
  } finally {
    if (planned.length > 0) store.sources.release(importId, planned);
  }
}

/** `write` over `items` a slice at a time, each slice sized from what the last ones cost (export's Pace), a turn of the loop between. */
async function inSlices<T>(items: T[], write: (slice: T[]) => void, turn: () => Promise<void>): Promise<void> {
  const pace = new Pace(SLICE_MS / 50, 1, 5_000);
  for (let from = 0; from < items.length; ) {
    const started = performance.now();
    const slice = items.slice(from, from + pace.fit(SLICE_MS));
    write(slice);
    from += slice.length;
    pace.took(slice.length, performance.now() - started);
    if (from < items.length) await turn();
  }
}
