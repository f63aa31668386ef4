// What the call detail says of forwarding (its `forwarding` field), apart from the judge that decides
// it (forwarding.ts): types.ts holds this shape without importing the judge, which reads types.ts.

export const FORWARDING_REASONS = ['webhooks_off', 'integrations', 'no_mapping_matched', 'dropped', 'blocked'] as const;
export type ForwardingReason = (typeof FORWARDING_REASONS)[number];

/** An Actions mapping that did not match the call, with its trigger (FQL; '' for none). */
export interface UnmatchedMapping {
  name: string;
  trigger: string;
}

export interface Forwarding {
  forwarded: boolean;
  /** Why not; absent when forwarded. */
  reason?: ForwardingReason;
  /** With `no_mapping_matched`: the source's mappings that did not match, with their triggers. */
  mappings?: UnmatchedMapping[];
}
