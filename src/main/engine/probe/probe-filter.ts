import type { Store } from '../store/store';
import type { CallFilter } from '../store/calls.repo';
import { PROBE_SOURCE_NAME } from '../../../shared/probe.contract';

/**
 * A list's `probe: false` as the store's filter: the probe source's calls left out (issue 40: each
 * Check a receiver run adds about 45, which buried a person's own calls in the Inspector). Named by
 * the API as "the probe", found here by the source's name, as the probe itself finds it.
 */
export function probeFilter<F extends { probe?: boolean }>(store: Store, f: F): Omit<F, 'probe'> & Pick<CallFilter, 'exceptSourceId'> {
  const { probe, ...rest } = f;
  if (probe !== false) return rest;
  const id = store.sources.byName(PROBE_SOURCE_NAME)?.id;
  return id === undefined ? rest : { ...rest, exceptSourceId: id };
}
