import { performance } from 'node:perf_hooks';
import type { Store } from '../store/store';
import { VERSION } from '../version';
import { harEntry, harHead, HAR_TAIL } from './export-har';
import { AttemptOrder } from './export-har-order';
import { Pace, SLICE_MS, type ExportCalls, type Slices } from './export-slices';

/**
 * HAR 1.2, one document written piecewise: its head, the entries joined by commas, its tail. First the
 * order (every attempt's start time and id, read by pages of calls, in slices), then the entries, read
 * by pages in that order and written a slice at a time. The attempts are those the covered calls had
 * when their page was read (export-slices.ts); one deleted meanwhile is left out.
 */
export async function* harText(store: Store, calls: ExportCalls, slices: Slices): AsyncGenerator<string> {
  yield harHead(VERSION);
  await calls.bound(slices);
  const order = new AttemptOrder();
  const callPace = new Pace(0.01, 1, 20_000);
  while (!calls.ended) {
    await slices.next();
    for (let left = SLICE_MS; left > 0 && !calls.ended; left = SLICE_MS - slices.elapsed()) {
      const t = performance.now();
      const page = calls.next(callPace.fit(left), slices);
      if (page.length === 0) continue;
      order.addRun(store.deliveries.attemptTimes(page));
      callPace.took(page.length, performance.now() - t);
    }
  }
  const entryPace = new Pace(0.2, 1, 5_000);
  let first = true;
  for (let done = order.size === 0; !done; ) {
    await slices.next();
    let text = '';
    for (let left = SLICE_MS; left > 0 && !done; left = SLICE_MS - slices.elapsed()) {
      const t = performance.now();
      const page = order.take(entryPace.fit(left));
      if (page.length === 0) {
        done = true;
        break;
      }
      const found = store.deliveries.attemptsById(page);
      for (const id of page) {
        const a = found.get(id);
        if (!a) continue;
        text += (first ? '' : ',') + JSON.stringify(harEntry({ id: a.callId, messageId: a.messageId }, a.attempt, a.sentBody));
        first = false;
        slices.progress.written++;
      }
      entryPace.took(page.length, performance.now() - t);
    }
    if (text) yield text;
  }
  yield HAR_TAIL;
}
