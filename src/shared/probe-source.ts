// Apart from probe.contract.ts (zod), so that the Inspector's first screen can hide the probe's calls
// without loading the contract's schemas (issue 40: what the first screen does not need waits).

/** The source the probe's calls arrive under (made on its first run, Webhooks off). */
export const PROBE_SOURCE_NAME = 'probe';
