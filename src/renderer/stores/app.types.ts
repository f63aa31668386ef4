import type { StateCreator } from 'zustand';
import type { ComposeSlice } from './compose.slice';
import type { InspectorSlice } from './inspector.slice';
import type { InspectorActionsSlice } from './inspector-actions.slice';
import type { SourcesSlice } from './sources.slice';
import type { ClientSlice } from './client.slice';
import type { SettingsSlice } from './settings.slice';
import type { UiSlice } from './ui.slice';
import type { ReceiversSlice } from './receivers.slice';
import type { DeletionsSlice } from './deletions.slice';
import type { AudiencesSlice } from './audiences.slice';
import type { LoadSlice } from './load.slice';
import type { SimToolsSlice } from './sim-tools.slice';
import type { DemoSlice } from './demo.slice';
import type { ActionsSlice } from './actions.slice';
import type { ProbeSlice } from './probe.slice';
import type { TrackingPlansSlice } from './tracking-plans.slice';
import type { UnsavedSlice } from './unsaved.slice';
import type { CallPicksSlice } from './call-picks.slice';
import type { OpenedExportSlice } from './opened-export.slice';

export type AppState = ComposeSlice &
  InspectorSlice &
  InspectorActionsSlice &
  SourcesSlice &
  ClientSlice &
  SettingsSlice &
  UiSlice &
  ReceiversSlice &
  DeletionsSlice &
  AudiencesSlice &
  LoadSlice &
  SimToolsSlice &
  DemoSlice &
  ActionsSlice &
  ProbeSlice &
  TrackingPlansSlice &
  CallPicksSlice &
  OpenedExportSlice &
  UnsavedSlice;

/** Every slice sees the whole state (slices pattern) but owns only its own keys. */
export type SliceCreator<S> = StateCreator<AppState, [], [], S>;
