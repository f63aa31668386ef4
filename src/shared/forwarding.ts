import type { CallStatus, Forwarding, WebhookSettings } from './types';
import { routesToWebhooks } from './routing';
import { forwardsActions, forwardsClassic } from './actions/mode';

// Why a call was or was not forwarded to the Webhooks destination (issue 26): a field of the call
// detail (GET /api/messages/:id `forwarding`), judged by the engine, and what Compose says of the
// call being written. One judge and one sentence per reason, so the inspector and Compose cannot
// tell two stories.

export interface ForwardingInput {
  status: CallStatus;
  /** It has a delivery, or waits in an Actions mapping's batch. */
  sent: boolean;
  /** The call's `integrations` object (normalized). */
  integrations: unknown;
  /** Its source's Webhooks settings; null when the source is unknown. */
  webhooks: Pick<WebhookSettings, 'enabled' | 'mode' | 'urls' | 'mappings'> | null;
  /** Each Actions mapping of the source, whether it matches the call (a trigger that cannot be read does not), in order. */
  matches: { name: string; trigger: string; matches: boolean }[];
}

/**
 * The judge. A dropped or blocked call is never forwarded; a call with a delivery (or queued in a
 * batch) was. Otherwise, in this order: its integrations turned Webhooks off; its source's Webhooks
 * destination is off or has nothing to send to in its mode (no URL for Classic, no mapping for
 * Actions); no Actions mapping matched it. The source's settings are read as they are now (the lab
 * keeps no history of them): README, Decisions.
 */
export function judgeForwarding(i: ForwardingInput): Forwarding {
  if (i.status === 'dropped') return { forwarded: false, reason: 'dropped' };
  if (i.status === 'blocked') return { forwarded: false, reason: 'blocked' };
  if (i.sent) return { forwarded: true };
  if (!routesToWebhooks(i.integrations)) return { forwarded: false, reason: 'integrations' };
  const w = i.webhooks;
  if (!w || !w.enabled) return { forwarded: false, reason: 'webhooks_off' };
  if (forwardsClassic(w) || !forwardsActions(w)) return { forwarded: false, reason: 'webhooks_off' };
  return { forwarded: false, reason: 'no_mapping_matched', mappings: i.matches.filter((m) => !m.matches).map(({ name, trigger }) => ({ name, trigger })) };
}

/**
 * The sentence for a call not forwarded, everywhere it is shown; null when it was forwarded.
 * `detail` completes a dropped call's (its drop reason) or a blocked one's (what its plan found).
 */
export function forwardingText(f: Forwarding, detail?: string | null): string | null {
  if (f.forwarded) return null;
  switch (f.reason) {
    case 'dropped':
      return `Dropped, not forwarded${detail ? `: ${detail}` : '.'}`;
    case 'blocked':
      return `Blocked by tracking plan, not forwarded${detail ? `: ${detail}` : '.'}`;
    case 'integrations':
      return 'Not forwarded: the call\'s integrations turned Webhooks off ("Webhooks": false, or "All": false without "Webhooks": true).';
    case 'webhooks_off':
      return "Not forwarded: its source's Webhooks destination is off, or has nothing to send to in its mode (no URL for Classic, no mapping for Actions).";
    case 'no_mapping_matched': {
      const ms = f.mappings ?? [];
      const list = ms.map((m) => `${m.name} (${m.trigger || 'every call'})`).join('; ');
      return `Not forwarded: no Actions mapping matched it${list ? `. Not matching: ${list}` : ''}.`;
    }
    default:
      return 'Not forwarded.';
  }
}
