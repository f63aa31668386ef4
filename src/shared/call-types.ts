// The six call types of the Segment spec, in their usual order. A file of its own: the output
// schemas (call-detail.output.ts) and types.ts both read it, and neither may import the other's values.
export const CALL_TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const;
export type CallType = (typeof CALL_TYPES)[number];
