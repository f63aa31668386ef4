import { useState } from 'react';
import type { Attempt, CallDetail, Delivery, UrlOutcome } from '../../../shared/types';
import { useAppStore } from '../../store-context';
import { batchMemberships, latestItemStatuses, waitingParts } from './delivery-model';

// The links between an Actions batch delivery and the calls it carries: the delivery lists its
// members (each selects that call), and a member call says which batch carried it.

/** Members listed at first (a batch holds up to 4,000 calls); each "more" click lists ten times as many again. */
export const MEMBERS_PAGE = 100;

/** "Batch of N calls": each member call, linked, with its per-item status when the receiver gave them. */
export function BatchMembers({ delivery, currentCallId }: { delivery: Delivery & { attempts: Attempt[] }; currentCallId: number }) {
  const store = useAppStore();
  const [shown, setShown] = useState(MEMBERS_PAGE);
  const ids = delivery.callIds;
  if (!ids) return null;
  const statuses = latestItemStatuses(delivery);
  return (
    <div className="batch-members" data-testid="batch-members" data-count={ids.length}>
      <span className="muted">
        batch of {ids.length} call{ids.length === 1 ? '' : 's'}
        {statuses ? ' · per-item statuses from the last answer:' : ''}
      </span>
      <ol>
        {ids.slice(0, shown).map((id, i) => (
          <li key={id} data-testid="batch-member" data-call-id={id} data-item-status={statuses?.[i]}>
            {id === currentCallId ? (
              <span className="mono">#{id} (this call)</span>
            ) : (
              <button type="button" className="link mono" data-testid="batch-member-link" onClick={() => store.getState().selectCall(id)}>
                #{id}
              </button>
            )}
            {statuses ? (
              <span className={`chip ${statuses[i] >= 200 && statuses[i] < 300 ? 'chip-delivered' : 'chip-failed'}`} data-testid="batch-item-status">
                {statuses[i]}
              </span>
            ) : null}
          </li>
        ))}
      </ol>
      {ids.length > shown ? (
        <button type="button" className="small" data-testid="batch-members-more" onClick={() => setShown(shown + MEMBERS_PAGE * 10)}>
          Show more ({shown.toLocaleString('en-US')} of {ids.length.toLocaleString('en-US')} listed)
        </button>
      ) : null}
    </div>
  );
}

/** For a call: the Actions batches that carried it (a link to each delivery) and the ones it waits for. */
export function BatchMembership({ detail }: { detail: CallDetail }) {
  const memberships = batchMemberships(detail, detail.call.id);
  const waiting = waitingParts(detail.urls ?? []);
  if (memberships.length === 0 && waiting.length === 0) return null;
  return (
    <div className="notice" data-testid="batch-membership">
      {memberships.map((m) => (
        <div key={m.deliveryId}>
          Item {m.item + 1} of {m.size} in the Actions batch of <b>{m.mapping}</b>:{' '}
          <button
            type="button"
            className="link"
            data-testid="batch-delivery-link"
            onClick={() => document.getElementById(`delivery-${m.deliveryId}`)?.scrollIntoView({ block: 'start' })}
          >
            delivery #{m.deliveryId}
          </button>
        </div>
      ))}
      {waiting.map((u: UrlOutcome) => (
        <div key={u.via!.mapping} data-testid="batch-waiting">
          Waiting in the Actions batch of <b>{u.via!.mapping}</b>
          {u.via!.waiting ? ` (${u.via!.waiting.queued} of ${u.via!.waiting.of} queued)` : ''}: it is sent when the batch is full or 5 s after its first call.
        </div>
      ))}
    </div>
  );
}
