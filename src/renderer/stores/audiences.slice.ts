import type { ApiClient } from '../../shared/api.contract';
import type { ApiError } from '../../shared/api-error';
import type { Audience, AudienceInput, AudienceMember, SyncResult } from '../../shared/simulation.contract';
import type { SliceCreator } from './app.types';
import { asApiError, errorText } from './errors';

export type PreviewInput = Pick<AudienceInput, 'type' | 'rule' | 'compute'>;

export interface AudiencePreview {
  members: AudienceMember[];
  total: number;
  /** The definition previewed, so the form can tell when the preview is stale. */
  key: string;
}

export interface AudiencesSlice {
  audiences: Audience[];
  audiencesLoaded: boolean;
  audiencesError: string | null;
  audienceFormError: ApiError | null;
  audiencePreview: AudiencePreview | null;
  audiencePreviewError: ApiError | null;
  previewing: boolean;
  /** The last sync of each audience this session (creation counts as one). */
  syncResults: Record<string, SyncResult & { at: string }>;
  syncingIds: string[];
  loadAudiences(): Promise<void>;
  previewAudience(input: PreviewInput): Promise<void>;
  clearAudiencePreview(): void;
  createAudience(input: AudienceInput): Promise<Audience | null>;
  /** Saves an edit (the whole definition) and re-syncs: only users whose membership changed get a call. */
  updateAudience(id: string, input: AudienceInput): Promise<Audience | null>;
  /** Stored members of each audience whose list was opened, as of its last sync. */
  audienceMembers: Record<string, { members: AudienceMember[]; total: number }>;
  loadAudienceMembers(id: string): Promise<void>;
  deleteAudience(id: string): Promise<void>;
  syncAudience(id: string): Promise<SyncResult | null>;
}

export function previewKey(input: PreviewInput): string {
  return JSON.stringify([input.type ?? 'audience', input.rule ?? null, input.compute ?? null]);
}

export function syncText(r: SyncResult): string {
  return `${r.entered} entered, ${r.exited} exited, ${r.sent} identify call${r.sent === 1 ? '' : 's'} sent`;
}

export const createAudiencesSlice =
  (api: ApiClient): SliceCreator<AudiencesSlice> =>
  (set, get) => {
    let previewSeq = 0;
    const remember = (r: SyncResult) => set({ syncResults: { ...get().syncResults, [r.audienceId]: { ...r, at: new Date().toISOString() } } });
    return {
      audiences: [],
      audiencesLoaded: false,
      audiencesError: null,
      audienceFormError: null,
      audiencePreview: null,
      audiencePreviewError: null,
      previewing: false,
      syncResults: {},
      syncingIds: [],
      audienceMembers: {},
      async loadAudiences() {
        try {
          set({ audiences: await api.call('listAudiences', {}), audiencesLoaded: true, audiencesError: null });
        } catch (err) {
          set({ audiencesError: errorText(err), audiencesLoaded: true });
        }
      },
      async previewAudience(input) {
        const seq = ++previewSeq;
        set({ previewing: true, audiencePreviewError: null });
        try {
          const r = await api.call('previewAudience', input);
          if (seq === previewSeq) set({ audiencePreview: { ...r, key: previewKey(input) } });
        } catch (err) {
          if (seq === previewSeq) set({ audiencePreviewError: asApiError(err), audiencePreview: null });
        } finally {
          if (seq === previewSeq) set({ previewing: false });
        }
      },
      clearAudiencePreview() {
        previewSeq++;
        set({ audiencePreview: null, audiencePreviewError: null, previewing: false });
      },
      async createAudience(input) {
        try {
          const { sync, ...audience } = await api.call('createAudience', input);
          set({ audiences: [...get().audiences.filter((a) => a.id !== audience.id), audience], audienceFormError: null });
          remember(sync);
          get().notify(`"${audience.name}" created and synced: ${syncText(sync)}`);
          return audience;
        } catch (err) {
          set({ audienceFormError: asApiError(err) });
          return null;
        }
      },
      async updateAudience(id, input) {
        try {
          const { sync, ...audience } = await api.call('updateAudience', { id, ...input, syncIntervalMs: input.syncIntervalMs ?? null });
          set({ audiences: get().audiences.map((a) => (a.id === id ? audience : a)), audienceFormError: null });
          remember(sync);
          get().notify(`"${audience.name}" saved and synced: ${syncText(sync)}`);
          if (get().audienceMembers[id]) void get().loadAudienceMembers(id);
          return audience;
        } catch (err) {
          set({ audienceFormError: asApiError(err) });
          return null;
        }
      },
      async loadAudienceMembers(id) {
        try {
          const r = await api.call('listAudienceMembers', { id });
          set({ audienceMembers: { ...get().audienceMembers, [id]: r } });
        } catch (err) {
          get().notify(errorText(err), 'error');
        }
      },
      async deleteAudience(id) {
        try {
          await api.call('deleteAudience', { id });
          set({ audiences: get().audiences.filter((a) => a.id !== id) });
        } catch (err) {
          get().notify(errorText(err), 'error');
        }
      },
      async syncAudience(id) {
        set({ syncingIds: [...get().syncingIds, id] });
        try {
          const r = await api.call('syncAudience', { id });
          remember(r);
          void get().loadAudiences();
          if (get().audienceMembers[id]) void get().loadAudienceMembers(id);
          return r;
        } catch (err) {
          get().notify(errorText(err), 'error');
          return null;
        } finally {
          set({ syncingIds: get().syncingIds.filter((x) => x !== id) });
        }
      },
    };
  };
