import { z } from 'zod';
import { op } from './api-op';
import { secretProblem } from './standard-webhooks';
import { classicUrlSchema } from './source.schema';

// Check a receiver (issue 25): the probe sends a receiver what the Webhooks destination sends,
// plus the requests it must refuse, and judges its answers. Spread into `api` by api.contract.ts;
// the engine side is src/main/engine/probe/, the CLI src/main/cli-probe.ts.

export { PROBE_SOURCE_NAME } from './probe-source';

/** Check ids, in the order a report lists them (README and docs/receiver-check.md). */
export const PROBE_CHECKS = [
  'transport',
  'call-types',
  'signature',
  'standard-webhooks',
  'latency',
  'duplicates',
  'retry-classes',
  'robustness',
  'ordering',
  'actions',
] as const;
export type ProbeCheckId = (typeof PROBE_CHECKS)[number];

/** pending and running only while a probe runs; a finished report holds the other four. */
export type ProbeVerdict = 'pass' | 'fail' | 'warn' | 'skipped' | 'pending' | 'running';

/** One request the probe sent and what came back. */
export interface ProbeEvidence {
  /** What this request is, e.g. "track", "tampered body, original X-Signature". */
  label: string;
  /** What a ready receiver answers, e.g. "2xx", "4xx". */
  expected: string;
  /** Whether the answer was what a ready receiver gives. */
  ok: boolean;
  method: string;
  url: string;
  status: number | null;
  /** From when it was sent (after any wait for its lane) to its answer. */
  durationMs: number;
  /**
   * How long it waited for a slot in the receiver's lane before it was sent (ms), when it waited: the
   * lab's sources had the lane's requests out to this receiver then. Absent when it went at once.
   */
  waitedMs?: number;
  /** Network, TLS or timeout error; null when an answer came. */
  error: string | null;
  /** The stored call in the inspector (source "probe"); null when nothing was stored. */
  callId: number | null;
  /** How Segment would treat this answer (Classic retry classes). */
  treatment: string;
}

export interface ProbeCheck {
  name: ProbeCheckId;
  title: string;
  ok: boolean;
  verdict: ProbeVerdict;
  /** What was found, in one or two sentences. */
  detail: string;
  /** Why it matters and how to fix a failure, one sentence. */
  why: string;
  evidence: ProbeEvidence[];
}

export interface ProbeReport {
  id: string;
  url: string;
  mode: 'classic' | 'actions';
  state: 'running' | 'done';
  /** Every check passed or warned (skipped ones count as passed); false while running. */
  ok: boolean;
  /** No TCP (or TLS) connection could be made to the receiver: nothing was judged (CLI exit 4). */
  unreachable: boolean;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  /** The source the probe's calls are stored under in the inspector. */
  sourceId: string | null;
  checks: ProbeCheck[];
}

export const probeInputSchema = z.strictObject({
  /** Held to the rules of a source's receiver URL (source.schema.ts): a URL the check runs against is one a source could send to. */
  url: classicUrlSchema,
  /** The source's shared secret (X-Signature); without it the signature check is skipped. */
  secret: z.string().max(1024).optional(),
  standardWebhooksSecret: z
    .string()
    .refine((s) => s === '' || secretProblem(s) === null, { error: (issue) => secretProblem(String(issue.input)) ?? 'invalid' })
    .optional(),
  mode: z.enum(['classic', 'actions']).default('classic'),
  /** Actions mode: the source and mapping whose requests to send (the actions check). */
  source: z.string().max(200).optional(),
  mapping: z.string().max(200).optional(),
  /** Only these checks; every one when omitted. */
  only: z.array(z.enum(PROBE_CHECKS)).min(1).max(PROBE_CHECKS.length).optional(),
}).superRefine((v, ctx) => {
  // A source or mapping in classic mode would be ignored: whoever named one meant an Actions check.
  if (v.mode === 'actions') return;
  for (const key of ['source', 'mapping'] as const) {
    if (v[key] !== undefined) ctx.addIssue({ code: 'custom', path: [key], message: `only in actions mode (mode is classic, which sends the Webhooks destination's requests; give mode "actions" to send a mapping's)` });
  }
});
export type ProbeInput = z.input<typeof probeInputSchema>;

const probeId = z.string().min(1).max(100);

/** A report's shape (issue 39: the answers of the operations the MCP tools use, as schemas; check_receiver's outputSchema). */
export const probeReportOutput = z.looseObject({
  id: z.string(),
  url: z.string(),
  state: z.enum(['running', 'done']),
  ok: z.boolean(),
  unreachable: z.boolean(),
  checks: z.array(z.looseObject({ name: z.string(), title: z.string(), ok: z.boolean(), verdict: z.string(), detail: z.string(), why: z.string(), evidence: z.array(z.looseObject({ label: z.string(), ok: z.boolean() })) })),
});

export const probeOps = {
  /** Starts a probe of a receiver in the background; the report is read (and followed) with getProbe. */
  startProbe: op<ProbeReport>()('POST', '/probes', probeInputSchema, { output: probeReportOutput }),
  /** A probe's report: its checks as far as they went (pending, running) until state is done. */
  getProbe: op<ProbeReport>()('GET', '/probes/:id', z.strictObject({ id: probeId }), { output: probeReportOutput }),
};

export type ProbeEvent = { type: 'probe.changed'; probe: ProbeReport };

/** Exit statuses of `webhook-lab probe` (README, docs/receiver-check.md). */
export const PROBE_EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 4 } as const;
