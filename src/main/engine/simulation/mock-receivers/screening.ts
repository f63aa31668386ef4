import type { MockBehavior } from '../../../../shared/mock-receiver.schema';

// What a receiver checks before it answers, for the behaviours that make a mock receiver a careful
// one or a flawed one in a demo or a probe (docs/mock-receivers.md, docs/receiver-check.md):
// enforceSignature (401 to a bad or missing signature; without it the check is only recorded, so
// the receiver accepts any signature), knownTypes (400 to a call of another type) and
// rejectDuplicates (409 to a messageId it already accepted). Pure but for `seen`, the receiver's
// memory of accepted messageIds (cleared by a reset).

/** The accepted messageIds a receiver remembers for rejectDuplicates; the oldest are forgotten first. */
export const SEEN_MESSAGE_IDS = 10_000;

export interface Refusal {
  status: number;
  error: string;
}

/** Whether this behaviour reads the body before answering. */
export function screens(b: MockBehavior): boolean {
  return b.enforceSignature === true || b.rejectDuplicates === true || b.knownTypes !== undefined;
}

/**
 * The refusal of one request, or null to answer as decided. `signatureProblem`: why the X-Signature
 * or webhook-signature check failed (null when valid or not checked). `body`: the request body, null
 * when it was too large to keep.
 */
export function screenRequest(b: MockBehavior, seen: Set<string>, body: Buffer | null, signatureProblem: string | null): Refusal | null {
  if (b.enforceSignature && signatureProblem !== null) return { status: 401, error: `signature refused: ${signatureProblem}` };
  if (!b.knownTypes && !b.rejectDuplicates) return null;
  type Call = { type?: unknown; messageId?: unknown };
  let call: Call | null = null;
  try {
    const parsed: unknown = body === null ? null : JSON.parse(body.toString('utf8'));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) call = parsed as Call;
  } catch {
    // not JSON: no type and no messageId
  }
  if (b.knownTypes && !(typeof call?.type === 'string' && b.knownTypes.includes(call.type))) {
    return { status: 400, error: `unknown type: ${typeof call?.type === 'string' ? `"${call.type}"` : 'none'} (this receiver knows ${b.knownTypes.join(', ')})` };
  }
  if (b.rejectDuplicates && typeof call?.messageId === 'string') {
    if (seen.has(call.messageId)) return { status: 409, error: `duplicate: messageId ${call.messageId} was already received` };
    if (seen.size >= SEEN_MESSAGE_IDS) seen.delete(seen.values().next().value!);
    seen.add(call.messageId);
  }
  return null;
}
