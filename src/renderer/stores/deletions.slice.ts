import type { ApiClient } from '../../shared/api.contract';
import type { ApiError } from '../../shared/api-error';
import type { DeletionRequest } from '../../shared/simulation.contract';
import type { SliceCreator } from './app.types';
import { asApiError, errorText } from './errors';
import { countOf } from '../components/format';

export interface DeletionsSlice {
  deletions: DeletionRequest[];
  deletionsLoaded: boolean;
  deletionsError: string | null;
  deletionFormError: ApiError | null;
  creatingDeletion: boolean;
  loadDeletions(): Promise<void>;
  createDeletion(input: { userId: string; purge: boolean }): Promise<DeletionRequest | null>;
}

/** Call ids of every delete notification, so delivery progress of those calls can refresh the list. */
export function deletionCallIds(list: DeletionRequest[]): Set<number> {
  return new Set(list.flatMap((d) => d.notifications.map((n) => n.callId)));
}

export const createDeletionsSlice =
  (api: ApiClient): SliceCreator<DeletionsSlice> =>
  (set, get) => {
    let seq = 0;
    return {
      deletions: [],
      deletionsLoaded: false,
      deletionsError: null,
      deletionFormError: null,
      creatingDeletion: false,
      async loadDeletions() {
        const mine = ++seq;
        try {
          const deletions = await api.call('listDeletions', {});
          if (mine === seq) set({ deletions, deletionsLoaded: true, deletionsError: null });
        } catch (err) {
          if (mine === seq) set({ deletionsError: errorText(err), deletionsLoaded: true });
        }
      },
      async createDeletion(input) {
        set({ creatingDeletion: true });
        try {
          const d = await api.call('createDeletion', input);
          seq++; // a list load in flight predates this request
          set({ deletions: [d, ...get().deletions.filter((x) => x.id !== d.id)], deletionFormError: null });
          const n = d.notifications.length;
          get().notify(
            n === 0
              ? `Deletion of "${d.userId}" recorded; no source with Webhooks enabled has calls of this user, so nothing was sent`
              : `Deletion of "${d.userId}": ${n} delete notification${n === 1 ? '' : 's'} queued${d.purge ? `, ${countOf(d.purgedCalls, 'local call')} purged` : ''}`,
          );
          return d;
        } catch (err) {
          set({ deletionFormError: asApiError(err) });
          return null;
        } finally {
          set({ creatingDeletion: false });
        }
      },
    };
  };
