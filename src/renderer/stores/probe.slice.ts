import type { ApiClient } from '../../shared/api.contract';
import type { ApiError } from '../../shared/api-error';
import type { ProbeInput, ProbeReport } from '../../shared/probe.contract';
import type { SliceCreator } from './app.types';
import { asApiError } from './errors';
import { tabHref } from '../screens';

/** The Check a receiver form as typed: kept while the user visits other screens, and filled from elsewhere (checkReceiver). */
export interface ProbeDraft {
  url: string;
  secret: string;
  standardWebhooksSecret: string;
}

export interface ProbeSlice {
  probeDraft: ProbeDraft;
  /** The probe started from this window, as far as it went (pushed by probe.changed). */
  probeReport: ProbeReport | null;
  probeFormError: ApiError | null;
  probeStarting: boolean;
  setProbeDraft(draft: Partial<ProbeDraft>): void;
  /** Opens the screen with this receiver filled in. */
  checkReceiver(draft: ProbeDraft): void;
  startProbe(input: ProbeInput): Promise<boolean>;
  /** Follows the running probe's progress; returns the unsubscribe function (the screen calls it). */
  watchProbe(): () => void;
}

/** Checks settled so far: a report never goes back to an earlier one (events and answers can cross). */
const progress = (r: ProbeReport) => (r.state === 'done' ? Infinity : r.checks.filter((c) => c.verdict !== 'pending' && c.verdict !== 'running').length);

export const createProbeSlice =
  (api: ApiClient): SliceCreator<ProbeSlice> =>
  (set, get) => {
    // Progress pushed for a probe whose start has not answered yet (the events can come first).
    const early = new Map<string, ProbeReport>();
    const show = (r: ProbeReport) => {
      const on = get().probeReport;
      if (on?.id === r.id && progress(on) > progress(r)) return;
      set({ probeReport: r });
    };
    return {
    probeDraft: { url: '', secret: '', standardWebhooksSecret: '' },
    probeReport: null,
    probeFormError: null,
    probeStarting: false,
    setProbeDraft(draft) {
      set({ probeDraft: { ...get().probeDraft, ...draft } });
    },
    checkReceiver(draft) {
      set({ probeDraft: draft, probeFormError: null });
      // Through the address, as the sidebar's links go (app.tsx follows hashchange).
      if (typeof location !== 'undefined') location.hash = tabHref('probe');
      else get().setTab('probe');
    },
    async startProbe(input) {
      set({ probeStarting: true });
      try {
        const r = await api.call('startProbe', input);
        set({ probeReport: r, probeFormError: null });
        const pushed = early.get(r.id);
        if (pushed) show(pushed);
        early.clear();
        return true;
      } catch (err) {
        set({ probeFormError: asApiError(err) });
        return false;
      } finally {
        set({ probeStarting: false });
      }
    },
    watchProbe() {
      const unsubscribe = api.subscribe((events) => {
        for (const e of events) {
          // Only the probe on screen: another window's (or the CLI's --api) probes are theirs.
          if (e.type !== 'probe.changed') continue;
          if (e.probe.id === get().probeReport?.id) show(e.probe);
          else if (get().probeStarting && early.size < 50) early.set(e.probe.id, e.probe);
        }
      });
      // Events sent before this subscription (the screen was away) are read once.
      const current = get().probeReport;
      if (current && current.state === 'running') {
        api.call('getProbe', { id: current.id }).then(
          (r) => get().probeReport?.id === r.id && show(r),
          () => undefined,
        );
      }
      return unsubscribe;
    },
  };
  };
