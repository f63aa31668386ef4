import { createStore } from 'zustand/vanilla';
import type { ApiClient } from '../../shared/api.contract';
import type { AppState } from './app.types';
import { createClientSlice } from './client.slice';
import { createComposeSlice } from './compose.slice';
import { createInspectorSlice } from './inspector.slice';
import { createSettingsSlice } from './settings.slice';
import { createSourcesSlice } from './sources.slice';
import { createUiSlice } from './ui.slice';
import { createReceiversSlice } from './receivers.slice';
import { createDeletionsSlice } from './deletions.slice';
import { createAudiencesSlice } from './audiences.slice';
import { createLoadSlice } from './load.slice';
import { createSimToolsSlice } from './sim-tools.slice';
import { createInspectorActionsSlice } from './inspector-actions.slice';
import { createDemoSlice } from './demo.slice';
import { createActionsSlice } from './actions.slice';
import { createProbeSlice } from './probe.slice';
import { createTrackingPlansSlice } from './tracking-plans.slice';
import { createUnsavedSlice } from './unsaved.slice';
import { createCallPicksSlice } from './call-picks.slice';
import { createOpenedExportSlice } from './opened-export.slice';

export type { AppState } from './app.types';

/** One store made of domain slices; the API client is injected so tests can pass a real transport. */
export function createAppStore(api: ApiClient) {
  return createStore<AppState>()((...a) => ({
    ...createUiSlice(...a),
    ...createComposeSlice(api)(...a),
    ...createInspectorSlice(api)(...a),
    ...createInspectorActionsSlice(api)(...a),
    ...createSourcesSlice(api)(...a),
    ...createClientSlice(api)(...a),
    ...createSettingsSlice(api)(...a),
    ...createReceiversSlice(api)(...a),
    ...createDeletionsSlice(api)(...a),
    ...createAudiencesSlice(api)(...a),
    ...createLoadSlice(api)(...a),
    ...createSimToolsSlice(api)(...a),
    ...createDemoSlice(api)(...a),
    ...createActionsSlice(api)(...a),
    ...createProbeSlice(api)(...a),
    ...createTrackingPlansSlice(api)(...a),
    ...createUnsavedSlice(...a),
    ...createCallPicksSlice(api)(...a),
    ...createOpenedExportSlice(...a),
  }));
}

export type AppStore = ReturnType<typeof createAppStore>;
