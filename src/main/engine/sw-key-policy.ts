import { shortKeyWarning } from '../../shared/standard-webhooks';
import type { ConfigWarning } from '../../shared/config.schema';
import type { Source, WebhookSettings } from '../../shared/types';
import { invalidInput } from './errors';

// Standard Webhooks keys: the spec asks for 24 to 64 random bytes. A key already stored (or in a
// config file written before the rule) keeps signing, with a warning at start and in the UI, so an
// upgrade never makes `serve --config` fail; a key given anew through the API that is shorter is
// refused on its field (README, Decisions).

const FIELD = 'webhooks.standardWebhooksSecret';

/** Refuses a short key that is new input: on create, or an update that changes the stored one. */
export function refuseShortNewKey(next: Pick<WebhookSettings, 'standardWebhooksSecret'> | undefined, stored?: Pick<WebhookSettings, 'standardWebhooksSecret'>): void {
  const secret = next?.standardWebhooksSecret;
  if (!secret || secret === stored?.standardWebhooksSecret) return;
  const warning = shortKeyWarning(secret);
  if (warning === null) return;
  throw Object.assign(invalidInput(`${FIELD}: ${warning}`), { fields: [{ path: FIELD, message: warning }] });
}

/**
 * A config file's Standard Webhooks key for source `index` (POST /api/config, `serve --config`): a
 * short key that changes what an existing source stores is new input, refused on its path as the API
 * refuses it; one equal to the stored key, or for a source the file creates (the file may have been
 * written before the rule), keeps signing with a warning. Returns the problem or the warning.
 */
export function configKeyCheck(
  index: number,
  given: Pick<WebhookSettings, 'standardWebhooksSecret'> | undefined,
  existing: Pick<Source, 'webhooks'> | undefined,
): { problem?: { path: string; message: string }; warning?: ConfigWarning } {
  const secret = given?.standardWebhooksSecret;
  const warning = secret ? shortKeyWarning(secret) : null;
  if (!secret || warning === null) return {};
  const path = `sources[${index}].${FIELD}`;
  if (existing && secret !== existing.webhooks.standardWebhooksSecret) return { problem: { path, message: warning } };
  return { warning: { path, code: 'short_standard_webhooks_key', message: `still used, but ${warning}` } };
}

/** One line per source whose stored key is shorter than the spec asks (logged at start). */
export function shortKeyWarnings(sources: readonly Pick<Source, 'name' | 'webhooks'>[]): string[] {
  return sources.flatMap((s) => {
    const w = shortKeyWarning(s.webhooks.standardWebhooksSecret ?? '');
    return w === null ? [] : [`source "${s.name}": Standard Webhooks secret still used, but ${w}`];
  });
}
