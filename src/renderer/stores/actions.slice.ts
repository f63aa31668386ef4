import type { ApiClient } from '../../shared/api.contract';
import type { ActionsPreviewItem, TriggerCheck } from '../../shared/actions.contract';
import type { ActionsMapping, ActionsTrigger, NormalizedCall } from '../../shared/types';
import type { SliceCreator } from './app.types';

/**
 * Webhooks (Actions) answers only the engine can give (Segment's mapping kit and FQL run there):
 * Compose's Actions previews and the Destinations screen's trigger check. Nothing is kept in the
 * store; callers hold the answer for the input they asked about.
 */
export interface ActionsSlice {
  previewActions(call: NormalizedCall, mappings: ActionsMapping[]): Promise<ActionsPreviewItem[]>;
  /** null when the engine could not be asked (the field then shows no check). */
  checkTrigger(trigger: ActionsTrigger | string, call?: NormalizedCall): Promise<TriggerCheck | null>;
}

export const createActionsSlice =
  (api: ApiClient): SliceCreator<ActionsSlice> =>
  () => ({
    previewActions: (call, mappings) => api.call('previewActions', { call, mappings }),
    async checkTrigger(trigger, call) {
      try {
        return await api.call('checkTrigger', call === undefined ? { trigger } : { trigger, call });
      } catch {
        return null;
      }
    },
  });
