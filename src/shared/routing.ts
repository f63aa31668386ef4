import { isPlainObject } from './message-rules';

/** The destination's name in a call's integrations object (SPEC §2, case sensitive). */
export const WEBHOOKS_INTEGRATION = 'Webhooks';

/**
 * Whether a call goes to the Webhooks destination (SPEC §3, real):
 * - no integrations object (absent, null, not an object) → every destination;
 * - `Webhooks: false` → off; `Webhooks` set to any truthy value (true, an options object, a string)
 *   → on, even under `All: false`;
 * - otherwise (`Webhooks` absent, or a falsy non-boolean such as null/0/"", read as "not set")
 *   → on unless `All` is exactly `false`.
 * A destination's name is case sensitive (`webhooks: false` is about some other destination), but the
 * all-switch is `all` in any letter case: Segment's server-side library looks it up case-insensitively,
 * and analytics-go v3's `DisableAll()` sends `all`.
 */
export function routesToWebhooks(integrations: unknown): boolean {
  if (!isPlainObject(integrations)) return true;
  const own = Object.prototype.hasOwnProperty.call(integrations, WEBHOOKS_INTEGRATION)
    ? integrations[WEBHOOKS_INTEGRATION]
    : undefined;
  if (own === false) return false;
  if (own) return true;
  for (const key in integrations) {
    if (key.length === 3 && key.toLowerCase() === 'all' && integrations[key] === false) return false;
  }
  return true;
}
