import { performance } from 'node:perf_hooks';
import type { CallDetails } from '../call-detail';
import { Pace, SLICE_MS, type ExportCalls, type Slices } from './export-slices';

/**
 * JSON Lines: one line per call, oldest first, in the shape of `GET /api/messages/:id`. Each slice
 * reads pages of calls (as many as fit in SLICE_MS, from what the last ones cost) and hands their
 * lines on; the next slice runs only once the reader took them (the generator is pulled), so a
 * slice's text is all that is held, whatever the export's size.
 */
export async function* jsonLines(details: CallDetails, calls: ExportCalls, slices: Slices): AsyncGenerator<string> {
  await calls.bound(slices);
  // Calls per ms of slice, learnt as it goes; the first page guesses 0.2 ms a call.
  const pace = new Pace(0.2, 1, 5_000);
  while (!calls.ended) {
    await slices.next();
    let text = '';
    // Pages until the slice is spent: one page normally, more when a filter finds calls sparsely.
    for (let left = SLICE_MS; left > 0 && !calls.ended; left = SLICE_MS - slices.elapsed()) {
      const t = performance.now();
      const page = calls.next(pace.fit(left), slices);
      if (page.length === 0) continue;
      // Everything of a page is read in one go, so its lines agree with each other. Each line is what
      // getMessage answers; the per-URL outcomes of the page in one query. An Actions batch's whole
      // body is on its first call's line only (each of up to 4,000 members repeating a 30 MB body
      // passed the longest string V8 makes); the other members' lines have the detail's cut form.
      for (const detail of details.many(page, { pageBatches: 'unlessFirst' })) {
        text += `${JSON.stringify(detail)}\n`;
        slices.progress.written++;
      }
      pace.took(page.length, performance.now() - t);
    }
    // One piece per slice; the next slice waits until the reader took it.
    if (text) yield text;
  }
}
