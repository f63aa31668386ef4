// The Standard Webhooks message id (`webhook-id`), made one way for the dispatcher, the receiver
// check and the Compose preview (issue 41): `msg_` and 18 random bytes in base64url (24 characters).
// It names the message, so it stays the same across a delivery's attempts and replays.

/** Random bytes in an id: 144 bits. */
export const WEBHOOK_ID_BYTES = 18;

/** A new webhook-id; `random` fills the bytes (tests give their own). */
export function newWebhookId(random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b)): string {
  const bytes = random(new Uint8Array(WEBHOOK_ID_BYTES));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `msg_${btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}
