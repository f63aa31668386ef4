import { judgeForwarding } from '../../shared/forwarding';
import type { Forwarding } from '../../shared/types';
import { actionsMappings } from '../../shared/actions/mode';
import type { StoredCall, UrlOutcome } from '../../shared/types';
import { checkTrigger } from './actions/preview';
import type { Store } from './store/store';

/**
 * Why the call was or was not forwarded (the detail's `forwarding`, shared/forwarding.ts): it has a
 * delivery or waits in a batch, or else the judge reads its integrations and its source's Webhooks
 * settings, and each Actions mapping's trigger against it (what Compose shows of a call being written).
 */
export function forwardingOf(store: Store, call: StoredCall, deliveries: number, urls: readonly UrlOutcome[]): Forwarding {
  const sent = deliveries > 0 || urls.some((u) => u.via !== undefined);
  const source = call.sourceId ? store.sources.get(call.sourceId) : undefined;
  const webhooks = source?.webhooks ?? null;
  const normalized = call.normalized;
  // Triggers are read only for a call that went nowhere (a forwarded one needs none).
  const mappings = !sent && call.status === 'accepted' && webhooks ? actionsMappings(webhooks) : [];
  return judgeForwarding({
    status: call.status,
    sent,
    integrations: normalized?.integrations,
    webhooks,
    matches: mappings.map((m) => {
      const check = checkTrigger(m.trigger, normalized ?? undefined);
      return { name: m.name, trigger: check.fql ?? '', matches: normalized !== null && check.matches === true };
    }),
  });
}
