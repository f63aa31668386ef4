import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type TestReceiver } from '../helpers/receiver';
import '../../src/main/engine/actions/rules';
import { matchesTrigger, triggerProblem } from '../../src/main/engine/actions/trigger';
import { buildActionsRequest } from '../../src/main/engine/actions/request';
import { isNotSentReason } from '../../src/main/engine/actions/mapping-kit';
import { createSourceSchema } from '../../src/shared/source.schema';
import { configSchema } from '../../src/shared/config.schema';
import type { ActionsMapping, NormalizedCall } from '../../src/shared/types';

// Issue 37: the cases of Segment's own test suites, run against the lab. The cases were extracted as
// data (tests/fidelity/upstream/, by scripts/extract-segment-cases.mjs) from segmentio/action-
// destinations at the commits that published the pinned @segment/destination-subscriptions and
// @segment/actions-core: the FQL parser, generator and subscription tests, and the mapping kit's
// (transform with every directive, the mapping validation fixtures, @liquid, the @template renderer,
// @flatten's flattener). For every case:
//   - the data: Segment's published package (tests/fidelity/node_modules) gives the outcome the
//     upstream test expects, so the extracted data is what Segment's code does;
//   - acceptance: a trigger or a mapping is refused by the lab (its control API's source schema and
//     its config file's schema, Segment's rules installed as the engine installs them) exactly when
//     Segment refuses it (parseFql returns an error; the mapping kit's validate throws);
//   - matching: the lab's matchesTrigger agrees with Segment's validate on the trigger's FQL;
//   - bytes: where both accept a mapping, the lab's request body (buildActionsRequest) is the body
//     Segment's real Webhooks (Actions) destination sends for the same data and payload, over real
//     local HTTP, or both send nothing.
// A disagreement fails with the case's upstream path, commit and test name.

const req = createRequire(import.meta.url);
/* eslint-disable @typescript-eslint/no-explicit-any */
const subs = req('@segment/destination-subscriptions') as { parseFql(f: string): any; generateFql(ast: any): string; validate(ast: any, e: unknown): boolean };
const core = req('@segment/actions-core') as { Destination: new (d: unknown) => any; transform(m: any, p?: any): any };
const segValidateMapping = req('@segment/actions-core/mapping-kit/validate').default as (m: unknown) => void;
const { render } = req('@segment/actions-core/mapping-kit/placeholders') as { render(t: any, d?: any): string };
const { flattenObject } = req('@segment/actions-core/mapping-kit/flatten') as { flattenObject(...a: any[]): any };
const webhook = req('@segment/action-destinations/dist/destinations/webhook').default;
/* eslint-enable @typescript-eslint/no-explicit-any */

const UPSTREAM = new URL('./upstream/', import.meta.url);

interface Source {
  repo: string;
  path: string;
  commit: string;
  test: string;
}
interface Expected {
  /** Jest's matcher the upstream test used (`not.` before it when negated). */
  matcher?: string;
  value?: unknown;
  throws?: boolean;
  errorMatches?: unknown[];
}
interface Case {
  id: string;
  source: Source;
  kind: 'parseFql' | 'generateFql' | 'validate' | 'validateMapping' | 'transform' | 'render' | 'flattenObject';
  input: Record<string, unknown>;
  expected: Expected;
  fixture?: { path: string };
}
interface CaseFile {
  upstream: { repo: string; path: string; commit: string; package: string };
  tests: number;
  cases: Case[];
  skipped: { test: string; reason: string }[];
}
interface Manifest {
  packages: { pkg: string; version: string; commit: string }[];
  files: { file: string }[];
}

const manifest = JSON.parse(readFileSync(new URL('manifest.json', UPSTREAM), 'utf8')) as Manifest;
const load = (file: string) => JSON.parse(readFileSync(new URL(file, UPSTREAM), 'utf8')) as CaseFile;

// ---------------------------------------------------------------------------------------------
// The extraction's tagged values (scripts/extract-segment-cases.mjs), back to what the test had.

function decode(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decode);
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1) {
    const t = o[keys[0]] as Record<string, string>;
    switch (keys[0]) {
      case '$undefined':
        return undefined;
      case '$error': {
        const e = new Error(t.message);
        // As a class sets it: on the prototype's side, not an own enumerable member toEqual would weigh.
        if (t.name !== 'Error') Object.defineProperty(e, 'name', { value: t.name, enumerable: false, configurable: true, writable: true });
        return e;
      }
      case '$objectContaining':
        return expect.objectContaining(decode(t) as Record<string, unknown>);
      case '$arrayContaining':
        return expect.arrayContaining(decode(t) as unknown[]);
      case '$regexp':
        return new RegExp(t.source, t.flags);
      case '$class':
        return Error;
    }
  }
  return Object.fromEntries(keys.map((k) => [k, decode(o[k])]));
}

/** What a config can hold: JSON (an `undefined` member is left out, as JSON.stringify leaves it). */
const asJson = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const short = (v: unknown, n = 300) => {
  const s = v === undefined ? 'undefined' : JSON.stringify(v);
  return s.length > n ? `${s.slice(0, n)}…` : s;
};
const errText = (e: unknown) => (e instanceof Error ? e.message : String(e)).split('\n')[0];

/** Jest's matcher semantics (vitest's expect): null when `actual` passes, else why not. */
function mismatch(actual: unknown, expected: Expected): string | null {
  try {
    const want = decode(expected.value);
    const negated = expected.matcher?.startsWith('not.') ?? false;
    const e = negated ? expect(actual).not : expect(actual);
    const matcher = expected.matcher?.replace(/^not\./, '');
    if (matcher === 'toStrictEqual') e.toStrictEqual(want);
    else if (matcher === 'toBe') e.toBe(want);
    else if (matcher === 'toMatchObject') e.toMatchObject(want as object);
    else if (matcher === 'toEqual') e.toEqual(want);
    else throw new Error(`no such matcher here: ${expected.matcher}`);
    return null;
  } catch (e) {
    return `Segment's package gives ${short(actual)}; upstream expects ${expected.matcher} ${short(expected.value)} (${errText(e)})`;
  }
}

/** A thrown error against the upstream test's toThrow arguments (text: part of the message; RegExp; Error: equal). */
function errorMismatch(err: unknown, matches: unknown[] | undefined): string | null {
  for (const m of matches ?? []) {
    const want = decode(m);
    const messages = err && typeof err === 'object' && Symbol.iterator in err ? [...(err as Iterable<Error>)].map((e) => e.message) : [];
    const message = err instanceof Error ? err.message : String(err);
    if (typeof want === 'string' && !message.includes(want)) return `threw "${errText(err)}", upstream expects a message with "${want}"`;
    if (want instanceof RegExp && !want.test(message)) return `threw "${errText(err)}", upstream expects ${want}`;
    if (Array.isArray(want) && !(messages.length ? messages : [message]).every((x) => want.includes(x))) return `threw ${short(messages.length ? messages : [message])}, upstream expects messages among ${short(want)}`;
    if (want instanceof Error && message !== want.message) return `threw "${message}", upstream expects "${want.message}"`;
  }
  return null;
}

/** Segment's package runs fn: null when it does what upstream expects (returns the value, or throws). */
function checkUpstream(fn: () => unknown, expected: Expected): string | null {
  let out: unknown;
  try {
    out = fn();
  } catch (err) {
    return expected.throws ? errorMismatch(err, expected.errorMatches) : `Segment's package throws "${errText(err)}"; upstream expects ${expected.throws === false ? 'no error' : short(expected.value)}`;
  }
  if (expected.throws) return `Segment's package returns ${short(out)}; upstream expects it to throw`;
  if (expected.throws === false) return null;
  return mismatch(out, expected);
}

// ---------------------------------------------------------------------------------------------
// The lab

const LAB_URL = 'http://127.0.0.1:9/upstream';

/** The lab's refusals of one mapping: its control API's source schema and its config file's. */
function labRefuses(mapping: Record<string, unknown>): string[] {
  const webhooks = { enabled: true, mode: 'actions', mappings: [{ name: 'upstream', ...mapping }] };
  const problems: string[] = [];
  const api = createSourceSchema.safeParse({ name: 'upstream', webhooks });
  if (!api.success) problems.push(`control API: ${api.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const file = configSchema.safeParse({ sources: [{ name: 'upstream', webhooks }] });
  if (!file.success) problems.push(`config file: ${file.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return problems;
}

/** Segment's refusal of a trigger: parseFql's error (what actions-core answers "invalid subscription"). */
function segmentTriggerProblem(fql: string): string | null {
  const ast = subs.parseFql(fql);
  return 'error' in ast ? `${ast.error?.name}: ${ast.error?.message}` : null;
}

/** Segment's refusal of a Webhooks mapping's data: the mapping kit's validate on the mapping as its subscription holds it. */
function segmentMappingProblem(data: unknown): string | null {
  try {
    segValidateMapping({ url: LAB_URL, method: 'POST', headers: {}, data });
    return null;
  } catch (err) {
    return errText(err);
  }
}

type Sent = { body: string } | { nothing: string };
const showSent = (s: Sent) => ('body' in s ? `body ${short(s.body, 600)}` : `nothing sent (${s.nothing})`);

let receiver: TestReceiver;
let sequence = 0;
const destination = new core.Destination(webhook);

/** What Segment's Webhooks (Actions) destination sends for this data and event. */
async function segmentSends(data: unknown, event: Record<string, unknown>): Promise<Sent> {
  const path = `/u${++sequence}`;
  const before = receiver.requests.length;
  let error = 'no request came';
  try {
    await destination.executeAction('send', { event: structuredClone(event), mapping: { url: `${receiver.url}${path}`, method: 'POST', headers: {}, data: structuredClone(data) }, settings: {} });
  } catch (err) {
    error = errText(err);
  }
  const got = receiver.requests.slice(before).find((r) => r.url === path);
  return got ? { body: got.body.toString('utf8') } : { nothing: error };
}

/** What the lab sends for the mapping its schema took, on the event as a call. */
function labSends(mapping: ActionsMapping, event: Record<string, unknown>): Sent {
  try {
    return { body: buildActionsRequest(mapping, [structuredClone(event) as unknown as NormalizedCall]).body };
  } catch (err) {
    if (isNotSentReason(err)) return { nothing: errText(err) };
    return { nothing: `the lab threw (not a reason of Segment's): ${errText(err)}` };
  }
}

/** The mapping as the lab's schema parsed it (defaults filled in), to build its request from. */
function labMapping(data: unknown): ActionsMapping {
  const parsed = createSourceSchema.parse({ name: 'upstream', webhooks: { enabled: true, mode: 'actions', mappings: [{ name: 'upstream', url: LAB_URL, data }] } });
  return parsed.webhooks!.mappings![0] as ActionsMapping;
}

// ---------------------------------------------------------------------------------------------
// One case

interface Outcome {
  /** The upstream expectation does not hold on Segment's package: the data is wrong. */
  data: string | null;
  /** Lab against Segment, one line each. */
  disagreements: string[];
  /** Lab comparisons made (0: the case has no lab input: a payload that is not an object, …). */
  compared: number;
  bytes: number;
  note?: string;
}

/** Acceptance of a trigger: the lab refuses it (triggerProblem, the schemas) ⇔ Segment's parseFql does. */
function compareTrigger(fql: string, out: Outcome): void {
  out.compared++;
  const seg = segmentTriggerProblem(fql);
  const schema = labRefuses({ trigger: fql, url: LAB_URL });
  const own = triggerProblem(fql);
  const lab = own !== null || schema.length > 0;
  if (lab !== (seg !== null)) {
    out.disagreements.push(
      `trigger ${JSON.stringify(fql)}: Segment ${seg ? `refuses it (parseFql: ${seg})` : 'accepts it'}, the lab ${lab ? `refuses it (triggerProblem: ${own ?? 'null'}; ${schema.join(' | ') || 'schemas accept'})` : 'accepts it'}`,
    );
  }
}

/** Acceptance of a mapping's data, then (both accepting, an object payload) the bytes sent. */
async function compareMapping(data: unknown, payload: unknown, out: Outcome): Promise<void> {
  out.compared++;
  const seg = segmentMappingProblem(data);
  const lab = labRefuses({ url: LAB_URL, data });
  if ((seg !== null) !== lab.length > 0) {
    out.disagreements.push(`data ${short(data)}: Segment ${seg ? `refuses it (validate: ${seg})` : 'accepts it'}, the lab ${lab.length ? `refuses it (${lab.join(' | ')})` : 'accepts it'}`);
    return;
  }
  if (seg !== null || !isPlainObject(payload)) return;
  out.bytes++;
  const segSent = await segmentSends(data, payload);
  const labSent = labSends(labMapping(data), payload);
  const same = 'body' in segSent ? 'body' in labSent && segSent.body === labSent.body : !('body' in labSent);
  if (!same) out.disagreements.push(`data ${short(data)} on ${short(payload)}: Segment's destination: ${showSent(segSent)}; the lab: ${showSent(labSent)}`);
}

async function runCase(c: Case): Promise<Outcome> {
  const out: Outcome = { data: null, disagreements: [], compared: 0, bytes: 0 };
  const input = c.input;
  switch (c.kind) {
    case 'parseFql': {
      const fql = input.fql as string;
      out.data = checkUpstream(() => subs.parseFql(fql), c.expected);
      compareTrigger(fql, out);
      break;
    }
    case 'generateFql': {
      const ast = decode(input.ast);
      out.data = checkUpstream(() => subs.generateFql(ast), c.expected);
      if (!c.expected.throws) compareTrigger(subs.generateFql(ast), out);
      break;
    }
    case 'validate': {
      const ast = decode(input.ast) as Record<string, unknown>;
      const event = decode(input.event);
      out.data = checkUpstream(() => subs.validate(ast, event), c.expected);
      // The lab takes FQL: the AST as Segment's generator writes it. Where that FQL parses back to
      // another AST (`= 123` reads as number_equals), the lab is held to Segment on that FQL.
      if ('error' in ast || !isPlainObject(event)) {
        out.note = 'error' in ast ? 'an AST with an error: no FQL writes it' : `an event that is not an object (${short(event)}): no call is`;
        break;
      }
      const fql = subs.generateFql(ast);
      compareTrigger(fql, out);
      const reparsed = subs.parseFql(fql);
      const segment = 'error' in reparsed ? false : subs.validate(reparsed, event);
      const lab = matchesTrigger(event as unknown as NormalizedCall, fql);
      if (mismatch(reparsed, { matcher: 'toEqual', value: input.ast }) !== null) out.note = `FQL ${JSON.stringify(fql)} reads back as another AST: compared on it`;
      if (lab !== segment) out.disagreements.push(`trigger ${JSON.stringify(fql)} on ${short(event)}: Segment's validate ${segment}, the lab's matchesTrigger ${lab}`);
      break;
    }
    case 'validateMapping': {
      const mapping = decode(input.mapping);
      out.data = checkUpstream(() => segValidateMapping(mapping), c.expected);
      await compareMapping(asJson(mapping), SAMPLE_CALL, out);
      break;
    }
    case 'transform': {
      const mapping = decode(input.mapping);
      const payload = 'payload' in input ? decode(input.payload) : {};
      out.data = checkUpstream(() => ('payload' in input ? core.transform(mapping, payload) : core.transform(mapping)), c.expected);
      if (!isPlainObject(payload)) out.note = `a payload that is not an object (${short(payload)}): no call is; the mapping alone is compared`;
      await compareMapping(asJson(mapping), payload, out);
      break;
    }
    case 'render': {
      // The renderer is @template's: the template as a field's @template, the data as the event.
      const template = decode(input.template);
      const data = 'data' in input ? decode(input.data) : {};
      out.data = checkUpstream(() => ('data' in input ? render(template, data) : render(template)), c.expected);
      await compareMapping({ value: { '@template': template } }, asJson(data), out);
      break;
    }
    case 'flattenObject': {
      // The flattener is @flatten's: the value at a path of the event, flattened by the directive.
      const args = ['value', 'prefix', 'separator', 'omitArrays'].filter((k) => k in input).map((k) => decode(input[k]));
      out.data = checkUpstream(() => flattenObject(...args), c.expected);
      const [value, , separator, omitArrays] = args;
      if (args[1] !== undefined && args[1] !== '') {
        out.note = 'a prefix: @flatten has none';
        break;
      }
      const directive = { value: { '@path': '$.value' }, separator: separator ?? '.', ...(omitArrays === undefined ? {} : { omitArrays }) };
      await compareMapping({ value: { '@flatten': directive } }, { value }, out);
      break;
    }
  }
  return out;
}

/** The event a mapping validation fixture (no payload of its own) is sent with. */
const SAMPLE_CALL = {
  type: 'track',
  event: 'Order Completed',
  userId: 'u-1',
  messageId: 'm-1',
  timestamp: '2024-01-02T03:04:05.000Z',
  properties: { total: 42, text: 'a & b <c> "d" é', items: [{ sku: 'S-1', price: 1.5 }], nothing: null },
  traits: { name: 'Ann', email: 'ann@example.com' },
  context: { library: { name: 'analytics.js', version: '1' }, ip: '1.1.1.1' },
};

// ---------------------------------------------------------------------------------------------

describe("Segment's own test cases, against the lab (issue 37)", () => {
  beforeAll(async () => {
    receiver = await startReceiver();
    process.stdout.write(`upstream: ${manifest.packages.map((p) => `${p.pkg}@${p.version} (${p.commit.slice(0, 10)})`).join(', ')}\n`);
  });
  afterAll(async () => {
    await receiver?.close();
  });

  for (const { file } of manifest.files) {
    const data = load(file);
    const title = `${data.upstream.path} @ ${data.upstream.commit.slice(0, 10)}: ${data.cases.length} cases from ${data.tests} tests`;
    it(title, async () => {
      const failures: string[] = [];
      let agreed = 0;
      let disagreed = 0;
      let upstreamOnly = 0;
      let bytes = 0;
      let dataWrong = 0;
      const notes = new Map<string, number>();
      for (const c of data.cases) {
        const out = await runCase(c);
        const where = `${c.id} [${c.source.path} @ ${c.source.commit.slice(0, 10)}, test "${c.source.test}"${c.fixture ? `, fixture ${c.fixture.path}` : ''}]`;
        if (out.data) {
          dataWrong++;
          failures.push(`${where}\n  DATA: ${out.data}`);
        }
        bytes += out.bytes;
        if (out.note) {
          const kind = out.note.replace(/ \(.*$|: .*$/, '');
          notes.set(kind, (notes.get(kind) ?? 0) + 1);
        }
        if (out.compared === 0) upstreamOnly++;
        else if (out.disagreements.length === 0) agreed++;
        else {
          disagreed++;
          failures.push(`${where}\n  input: ${short(c.input, 500)}${out.note ? `\n  note: ${out.note}` : ''}\n${out.disagreements.map((d) => `  DISAGREE: ${d}`).join('\n')}`);
        }
      }
      process.stdout.write(
        `upstream: ${data.upstream.path}: ${data.cases.length} cases (${data.skipped.length} skipped upstream calls), ` +
          `${agreed} agreed, ${disagreed} disagreed, ${upstreamOnly} upstream-only (no lab input), ${bytes} body comparisons, ${dataWrong} data mismatches\n`,
      );
      for (const [note, n] of notes) process.stdout.write(`  ${n} × ${note}\n`);
      for (const f of failures) process.stdout.write(`${f}\n`);
      expect(failures, failures.join('\n\n')).toEqual([]);
    });
  }
});
