import { countOf } from '../components/format';
import type { ApiClient, ClearCallsResult, OpInput, RetryMatchingResult } from '../../shared/api.contract';
import type { VerifySignatureResult } from '../../shared/signature-verify.contract';
import type { BatchItemsPage } from '../../shared/types';
import type { SliceCreator } from './app.types';
import { errorText } from './errors';
import { listQuery } from './inspector.slice';

/** Acting on what the inspector shows: replay with an edited body, retry what failed, clear everything. */
export interface InspectorActionsSlice {
  /** Sends this body (JSON text, exactly these bytes) to every URL of the call, signed with the current secret. */
  /** deliveryId: one of the call's deliveries (an Actions one); the Classic delivery when omitted. */
  replayEdited(id: number, body: string, deliveryId?: number): Promise<boolean>;
  /** How many failed or expired calls the current filters match (what the confirm shows). */
  countRetryable(): Promise<number | null>;
  /** Sends them again (manual attempts, in the background). */
  retryMatching(): Promise<RetryMatchingResult | null>;
  /** Deletes every call; the list and the detail empty. */
  clearCalls(): Promise<ClearCallsResult | null>;
  /** A page of a large Actions batch's items (the detail shows only its first ones); null on error (notified). */
  loadBatchItems(deliveryId: number, offset: number, limit: number): Promise<BatchItemsPage | null>;
  /** An attempt's signatures checked by the engine against every version of its source's secrets it keeps (never shown); the error's text when refused. */
  verifyWithLab(input: OpInput<'verifySignature'>): Promise<VerifySignatureResult | string>;
}

export const createInspectorActionsSlice =
  (api: ApiClient): SliceCreator<InspectorActionsSlice> =>
  (set, get) => ({
    async verifyWithLab(input) {
      try {
        return await api.call('verifySignature', input);
      } catch (err) {
        return errorText(err);
      }
    },
    async replayEdited(id, body, deliveryId) {
      set({ replaying: true });
      try {
        const r = await api.call('replayMessage', { id, body, ...(deliveryId === undefined ? {} : { deliveryId }) });
        // Its attempts reach the open detail as pushed events (live-events.ts), as another window's would.
        get().notify(`Replayed with the edited body: ${countOf(r.attempts.length, 'new attempt')}`);
        return true;
      } catch (err) {
        get().notify(errorText(err), 'error');
        return false;
      } finally {
        set({ replaying: false });
      }
    },
    async countRetryable() {
      try {
        return (await api.call('retryMatching', { ...listQuery(get().filters), dryRun: true })).matched;
      } catch (err) {
        get().notify(errorText(err), 'error');
        return null;
      }
    },
    async retryMatching() {
      try {
        const r = await api.call('retryMatching', listQuery(get().filters));
        get().notify(
          r.retried < r.matched
            ? `Retrying ${r.retried} of ${r.matched} failed or expired calls (at most 10,000 at once)`
            : `Retrying ${r.retried} failed or expired call${r.retried === 1 ? '' : 's'}`,
        );
        return r;
      } catch (err) {
        get().notify(errorText(err), 'error');
        return null;
      }
    },
    async loadBatchItems(deliveryId, offset, limit) {
      try {
        return await api.call('getBatchItems', { id: deliveryId, offset, limit });
      } catch (err) {
        get().notify(errorText(err), 'error');
        return null;
      }
    },
    async clearCalls() {
      try {
        const r = await api.call('clearCalls', {});
        get().selectCall(null);
        get().clearPicks();
        get().notify(`Cleared ${r.removed} call${r.removed === 1 ? '' : 's'}`);
        await get().loadCalls();
        return r;
      } catch (err) {
        get().notify(errorText(err), 'error');
        return null;
      }
    },
  });
