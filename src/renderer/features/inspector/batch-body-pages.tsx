import { useState } from 'react';
import type { Delivery } from '../../../shared/types';
import { BodyView } from '../../components/lazy-json-view';
import { useAppStore } from '../../store-context';

// A large Actions batch's body (Delivery.bodyTruncated): the call's detail carries only its first
// items, and the rest is read a page at a time (getBatchItems), never the whole body at once.

/** Items read per page. */
export const BATCH_PAGE_ITEMS = 50;

interface Page {
  offset: number;
  /** The page's items as one JSON array text. */
  text: string;
  count: number;
}

export function BatchBodyPages({ delivery, raw }: { delivery: Pick<Delivery, 'id' | 'body' | 'bodyTruncated'>; raw: boolean }) {
  const store = useAppStore();
  const cut = delivery.bodyTruncated!;
  const first: Page = { offset: 0, text: delivery.body, count: cut.shownItems };
  // The pages visited, so "previous" returns to the same items even where a page stopped at 1 MB.
  const [trail, setTrail] = useState<Page[]>([first]);
  const [loading, setLoading] = useState(false);
  const page = trail.length === 1 ? first : trail[trail.length - 1];
  const next = async () => {
    setLoading(true);
    const r = await store.getState().loadBatchItems(delivery.id, page.offset + page.count, BATCH_PAGE_ITEMS);
    setLoading(false);
    if (r && r.items.length > 0) setTrail([...trail, { offset: r.offset, text: `[${r.items.map((i) => i.data).join(',')}]`, count: r.items.length }]);
  };
  return (
    <div className="batch-body-pages" data-testid="batch-body-pages" data-offset={page.offset} data-count={page.count}>
      <div className="notice small-text" data-testid="batch-body-cut">
        A batch of {cut.items.toLocaleString('en-US')} calls, {cut.bytes.toLocaleString('en-US')} B in all: shown a page at a time. Items{' '}
        <span data-testid="batch-body-range">
          {page.offset + 1}–{page.offset + page.count}
        </span>{' '}
        of {cut.items.toLocaleString('en-US')}, as a JSON array:
      </div>
      <BodyView text={page.text} raw={raw} label="batch items" testId="delivery-body" />
      <div className="row">
        <button type="button" className="small" data-testid="batch-body-prev" disabled={trail.length === 1 || loading} onClick={() => setTrail(trail.slice(0, -1))}>
          Previous items
        </button>
        <button type="button" className="small" data-testid="batch-body-next" disabled={page.offset + page.count >= cut.items || loading} onClick={() => void next()}>
          {loading ? 'Loading…' : 'Next items'}
        </button>
      </div>
    </div>
  );
}
