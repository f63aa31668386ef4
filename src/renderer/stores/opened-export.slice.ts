import type { CallDetail } from '../../shared/types';
import type { SliceCreator } from './app.types';
import { errorText } from './errors';
import { countLines, parseExport, tooLarge, tooManyLines, type ExportLineProblem } from './opened-export-model';

/** A JSON Lines export opened from a file: shown read-only in place of the live calls (features/inspector/opened-export-view.tsx). */
export interface OpenedExport {
  fileName: string;
  /** Newest first, as the live list. */
  calls: CallDetail[];
  problems: ExportLineProblem[];
  moreProblems: number;
}

export interface OpenedExportSlice {
  openedExport: OpenedExport | null;
  openingExport: boolean;
  /**
   * Set only in the store of the read-only view: why the controls that need the engine (replay, edit &
   * replay, picks) are off there. null in the app's own store.
   */
  readOnly: string | null;
  /** Why a file cannot be opened at all (too large, empty, unreadable) is said in an error toast; its lines' problems are in openedExport. */
  openExport(file: File): Promise<void>;
  /** Back to live calls. */
  closeExport(): void;
}

export const READ_ONLY_REASON = 'Read-only: this call is from an opened export file, not in the lab. Back to live calls to replay or retry.';

export const createOpenedExportSlice: SliceCreator<OpenedExportSlice> = (set, get) => ({
  openedExport: null,
  openingExport: false,
  readOnly: null,
  async openExport(file) {
    const refuse = (why: string) => get().notify(why, 'error');
    const large = tooLarge(file.name, file.size);
    if (large) return refuse(large);
    set({ openingExport: true });
    try {
      const text = await file.text();
      const many = tooManyLines(file.name, countLines(text));
      if (many) return refuse(many);
      const parsed = parseExport(text);
      if (parsed.calls.length === 0 && parsed.problems.length === 0) return refuse(`${file.name} is empty: an export has one call per line.`);
      set({ openedExport: { fileName: file.name, calls: parsed.calls.reverse(), problems: parsed.problems, moreProblems: parsed.moreProblems } });
      get().notify(`Opened ${file.name}: ${parsed.calls.length} call${parsed.calls.length === 1 ? '' : 's'}, read-only`);
    } catch (err) {
      refuse(`${file.name} could not be read: ${errorText(err)}`);
    } finally {
      set({ openingExport: false });
    }
  },
  closeExport() {
    set({ openedExport: null });
  },
});
