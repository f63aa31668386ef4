#!/usr/bin/env node
// Extracts the cases of Segment's own test suites as data (issue 37), for the differential test
// tests/fidelity/upstream.fidelity.ts (npm run test:fidelity):
//   - @segment/destination-subscriptions: src/__tests__/fql.test.ts (parseFql, and generateFql's
//     round trip), validate.test.ts (validate(ast, event)), generate-fql.test.ts (generateFql(ast));
//   - @segment/actions-core: src/mapping-kit/__tests__/*.test.ts (transform: every directive; the
//     mapping validation over schema-fixtures/; @liquid; the @template renderer; @flatten's
//     flattenObject).
// Each case keeps its upstream repository, path, commit and test name, so a later upgrade re-runs
// this script and then the test.
//
//   node scripts/extract-segment-cases.mjs --repo <git dir of segmentio/action-destinations>
//        [--core <version or commit>] [--subscriptions <version or commit>] [--out <dir>]
//
// The repository may be a bare clone (no work tree): files are read with `git show <commit>:<path>`.
// Versions default to the lab's pins (package.json dependencies); a version is found by its release
// tag (`@segment/actions-core@3.170.0`) or, without the tag, by the npm registry's gitHead.
//
// How: each upstream test file is compiled from TypeScript (the lab's `typescript`) and run in a shim
// of Jest: `describe`/`test`/`it` register and run the bodies; the functions under test are replaced
// by recorders that return a marker of the call (its arguments), and `expect(marker)`'s matchers
// record the expected outcome (`toEqual(ast)`, `toStrictEqual(output)`, `toThrow('message')`,
// `not.toThrow()`). Nothing of Segment's code runs here: the test checks the recorded outcomes
// against Segment's published packages. What cannot be recorded so is listed under `skipped` with
// the reason, and the counts are printed.
//
// Values JSON cannot hold are written as tagged objects (decoded by the test):
//   {"$undefined": true}  undefined (an argument left out, or a key whose value is undefined)
//   {"$error": {"name", "message"}}  an Error value (toEqual(new Error('…')))
//   {"$objectContaining": …}, {"$arrayContaining": …}  Jest's asymmetric matchers
//   {"$regexp": {"source", "flags"}}  a RegExp (toThrow(/…/))
//   {"$class": "Error"}  toThrow(Error)

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, posix, resolve } from 'node:path';
import vm from 'node:vm';

const root = resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);
const ts = require('typescript');

const REPO = 'segmentio/action-destinations';

// ---------------------------------------------------------------------------------------------
// Arguments, commits

function args() {
  const out = { repo: null, core: null, subscriptions: null, out: join(root, 'tests/fidelity/upstream') };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const key = argv[i].replace(/^--/, '');
    if (!(key in out) || argv[i + 1] === undefined) usage(`unknown or incomplete argument ${argv[i]}`);
    out[key] = argv[++i];
  }
  if (!out.repo) usage('--repo is required');
  return out;
}

function usage(problem) {
  process.stderr.write(`${problem}\nusage: node scripts/extract-segment-cases.mjs --repo <git dir> [--core <version|commit>] [--subscriptions <version|commit>] [--out <dir>]\n`);
  process.exit(2);
}

const git = (repo, ...a) => execFileSync('git', ['-C', repo, ...a], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

/** The commit that published `pkg@version` (its release tag, else npm's gitHead), or the commit given. */
function commitOf(repo, pkg, wanted, dir) {
  const pinned = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).dependencies[pkg];
  const given = wanted ?? pinned;
  let commit;
  let version = null;
  if (/^[0-9a-f]{7,40}$/.test(given)) {
    commit = git(repo, 'rev-parse', `${given}^{commit}`).trim();
  } else {
    version = given;
    try {
      commit = git(repo, 'rev-parse', `${pkg}@${version}^{commit}`).trim();
    } catch {
      commit = execFileSync('npm', ['view', `${pkg}@${version}`, 'gitHead'], { encoding: 'utf8' }).trim();
      git(repo, 'cat-file', '-e', `${commit}^{commit}`);
    }
  }
  const declared = JSON.parse(git(repo, 'show', `${commit}:${dir}/package.json`)).version;
  if (version !== null && declared !== version) throw new Error(`${pkg}: ${dir}/package.json at ${commit} says ${declared}, not ${version}`);
  return { pkg, version: declared, commit };
}

// ---------------------------------------------------------------------------------------------
// Encoding of values JSON cannot hold

const MATCHER = Symbol('asymmetric matcher');

function encode(v, seen = new Set()) {
  if (v === undefined) return { $undefined: true };
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`a number JSON cannot hold: ${v}`);
    return v;
  }
  if (typeof v === 'function') {
    if (v === Error || v === TypeError) return { $class: v.name };
    throw new Error(`a function value: ${v}`);
  }
  if (typeof v !== 'object') throw new Error(`a value of type ${typeof v}`);
  if (seen.has(v)) throw new Error('a cyclic value');
  seen.add(v);
  try {
    if (v[MATCHER]) return { [`$${v[MATCHER]}`]: encode(v.value, seen) };
    if (v instanceof Error) return { $error: { name: v.name, message: v.message } };
    if (v instanceof RegExp) return { $regexp: { source: v.source, flags: v.flags } };
    if (Array.isArray(v)) return Array.from(v, (x) => encode(x, seen));
    const out = {};
    for (const k of Object.keys(v)) {
      if (k.startsWith('$') && Object.keys(v).length === 1) throw new Error(`a key that reads as a tag: ${k}`);
      out[k] = encode(v[k], seen);
    }
    return out;
  } finally {
    seen.delete(v);
  }
}

// ---------------------------------------------------------------------------------------------
// The Jest shim

/** A call of a function under test, as recorded (its arguments encoded when it was made). */
class Call {
  constructor(fn, args) {
    this.fn = fn;
    this.args = args.map((a) => encode(a));
    this.raw = args;
    this.expectations = [];
  }
}

/** Thrown by `fail()`: the call before it was expected to throw (generate-fql.test.ts). */
class FailSignal extends Error {
  constructor(call) {
    super('fail() reached');
    this.call = call;
  }
}

/**
 * Runs one upstream test file in the shim. `modules` maps a relative import to its recorders (or a
 * real module); returns the tests with the calls each made and the expectations recorded on them.
 */
function runTestFile(source, fileName, modules, otherRequire = () => undefined) {
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    fileName,
  });
  const tests = [];
  const names = [];
  let current = null;
  const register = (name, fn) => tests.push({ name: [...names, name].join(' > '), fn });
  const describe = (name, fn) => {
    names.push(name);
    try {
      fn();
    } finally {
      names.pop();
    }
  };
  const record = (call, expectation) => {
    if (!call.expectations.some((e) => JSON.stringify(e) === JSON.stringify(expectation))) call.expectations.push(expectation);
  };
  const matchers = (actual, negated) => {
    const onValue = (matcher) => (expected) => {
      if (actual instanceof Call) return record(actual, { matcher: negated ? `not.${matcher}` : matcher, value: encode(expected) });
      if (actual instanceof FailSignal) return record(actual.call, { matcher: 'throws', value: encode(expected) });
      // A matcher on a value that is no call (a fixture's shape, `hasError`): nothing to record.
    };
    const onThrow = (expected) => {
      if (typeof actual !== 'function') throw new Error('toThrow on a value that is not a function');
      const before = current.calls.length;
      actual();
      const made = current.calls.slice(before);
      if (made.length === 0) throw new Error('toThrow on a function that called nothing under test');
      for (const call of made) record(call, negated ? { matcher: 'not.toThrow' } : { matcher: 'toThrow', value: expected === undefined ? null : encode(expected) });
    };
    const plain = () => () => {};
    return {
      toEqual: onValue('toEqual'),
      toStrictEqual: onValue('toStrictEqual'),
      toBe: onValue('toBe'),
      toMatchObject: onValue('toMatchObject'),
      toThrow: onThrow,
      toThrowError: onThrow,
      toBeDefined: plain(),
      toBeTruthy: plain(),
      toContain: plain(),
      toMatch: plain(),
    };
  };
  const expect = (actual) => ({ ...matchers(actual, false), not: matchers(actual, true) });
  expect.objectContaining = (value) => ({ [MATCHER]: 'objectContaining', value });
  expect.arrayContaining = (value) => ({ [MATCHER]: 'arrayContaining', value });
  const fail = () => {
    throw new FailSignal(current.calls[current.calls.length - 1]);
  };
  const requireShim = (spec) => {
    if (spec in modules) return modules[spec];
    const other = otherRequire(spec);
    if (other !== undefined) return other;
    throw new Error(`${fileName}: no shim for import "${spec}"`);
  };
  // A recording module's functions return a Call, kept with the test that made it.
  for (const mod of Object.values(modules)) {
    if (!mod?.__recorders) continue;
    for (const fn of mod.__recorders) {
      mod[fn] = (...a) => {
        const call = new Call(fn, a);
        current.calls.push(call);
        return call;
      };
    }
  }
  const module = { exports: {} };
  const body = vm.compileFunction(outputText, ['exports', 'require', 'module', '__filename', '__dirname', 'describe', 'test', 'it', 'expect', 'fail'], { filename: fileName });
  body(module.exports, requireShim, module, fileName, posix.dirname(fileName), describe, register, register, expect, fail);
  const ran = [];
  for (const t of tests) {
    current = { name: t.name, calls: [], error: null };
    try {
      t.fn();
    } catch (err) {
      current.error = err;
    }
    ran.push(current);
  }
  return ran;
}

const recording = (...fns) => ({ __esModule: true, __recorders: fns });

// ---------------------------------------------------------------------------------------------
// The upstream files and how each call becomes a case

/** The expected outcome of a call with the one expectation it has (several for the same call are merged). */
function outcome(call) {
  const e = call.expectations;
  if (e.length === 0) return null;
  const throws = e.filter((x) => x.matcher === 'toThrow' || x.matcher === 'throws');
  if (throws.length > 0) {
    if (e.length !== throws.length) throw new Error(`${call.fn}: expected to throw and to return`);
    const matches = throws.map((x) => x.value).filter((v) => v !== null && !(v && typeof v === 'object' && '$class' in v));
    return { throws: true, ...(matches.length ? { errorMatches: matches } : {}) };
  }
  if (e.length === 1 && e[0].matcher === 'not.toThrow') return { throws: false };
  if (e.length === 1) return { matcher: e[0].matcher, value: e[0].value };
  throw new Error(`${call.fn}: ${e.length} expectations ${JSON.stringify(e)}`);
}

function extract(repoDir, subs, core) {
  const files = [];
  const show = (commit, path) => git(repoDir, 'show', `${commit}:${path}`);

  const subsDir = 'packages/destination-subscriptions/src/__tests__';
  const coreDir = 'packages/core/src/mapping-kit/__tests__';

  const subsFile = (name, convert) => {
    const path = `${subsDir}/${name}`;
    const modules = { '../index': recording('parseFql', 'generateFql', 'validate') };
    return { path, upstream: subs, ran: runTestFile(show(subs.commit, path), path, modules), convert };
  };

  const subsConvert = (call) => {
    if (call.fn === 'parseFql') return { kind: 'parseFql', input: { fql: call.args[0] }, expected: outcome(call) };
    if (call.fn === 'generateFql') return { kind: 'generateFql', input: { ast: call.args[0] }, expected: outcome(call) };
    if (call.fn === 'validate') return { kind: 'validate', input: { ast: call.args[0], event: call.args[1] }, expected: outcome(call) };
    return null;
  };
  files.push({ out: 'destination-subscriptions/fql.test.json', ...subsFile('fql.test.ts', subsConvert) });
  files.push({ out: 'destination-subscriptions/validate.test.json', ...subsFile('validate.test.ts', subsConvert) });
  files.push({ out: 'destination-subscriptions/generate-fql.test.json', ...subsFile('generate-fql.test.ts', subsConvert) });

  const transformConvert = (call) => {
    if (call.fn !== 'transform') return null;
    return { kind: 'transform', input: { mapping: call.args[0], ...(call.args.length > 1 ? { payload: call.args[1] } : {}) }, expected: outcome(call) };
  };
  const coreFile = (name, modules, convert) => {
    const path = `${coreDir}/${name}`;
    return { path, upstream: core, ran: runTestFile(show(core.commit, path), path, modules), convert };
  };
  const valueKeys = recording('getFieldValueKeys');
  files.push({ out: 'actions-core/index.iso.test.json', ...coreFile('index.iso.test.ts', { '../index': recording('transform') }, transformConvert) });
  files.push({ out: 'actions-core/liquid.test.json', ...coreFile('liquid.test.ts', { '../index': recording('transform'), '../value-keys': valueKeys }, transformConvert) });
  files.push({
    out: 'actions-core/placeholders.test.json',
    ...coreFile('placeholders.test.ts', { '../placeholders': recording('render') }, (call) =>
      call.fn === 'render' ? { kind: 'render', input: { template: call.args[0], ...(call.args.length > 1 ? { data: call.args[1] } : {}) }, expected: outcome(call) } : null,
    ),
  });
  files.push({
    out: 'actions-core/flatten.test.json',
    ...coreFile('flatten.test.ts', { '../flatten': recording('flattenObject') }, (call) =>
      call.fn === 'flattenObject' ? { kind: 'flattenObject', input: Object.fromEntries(['value', 'prefix', 'separator', 'omitArrays'].slice(0, call.args.length).map((k, i) => [k, call.args[i]])), expected: outcome(call) } : null,
    ),
  });
  files.push({ out: 'actions-core/value-keys.test.json', ...coreFile('value-keys.test.ts', { '../value-keys': recording('getFieldValueKeys') }, () => null) });

  // validate.test.ts reads schema-fixtures/{valid,invalid}/*.json with fs and require: the shim
  // serves them from the commit. Its invalid fixtures are checked in a try/catch (no matcher on the
  // call itself): a validate call left without an expectation there takes the fixture's expectError,
  // as the test's catch block compares it.
  const fixtureOf = new Map();
  const fsShim = {
    readdirSync(dir) {
      // `<mode> <type> <object>\t<name>` per entry
      const listed = git(repoDir, 'ls-tree', `${core.commit}:${dir}`).split('\n').filter(Boolean);
      return listed.map((line) => ({ name: line.split('\t')[1], isFile: () => line.split(' ')[1] === 'blob' }));
    },
  };
  const fixtureRequire = (spec) => {
    if (!spec.endsWith('.json')) return undefined;
    const json = JSON.parse(show(core.commit, spec));
    fixtureOf.set(json.mapping, { path: spec, json });
    return json;
  };
  const validatePath = `${coreDir}/validate.test.ts`;
  const validateModules = { fs: fsShim, path: { join: (...p) => posix.join(...p) }, '../validate': recording('default') };
  files.push({
    out: 'actions-core/validate.test.json',
    path: validatePath,
    upstream: core,
    ran: runTestFile(show(core.commit, validatePath), validatePath, validateModules, fixtureRequire),
    convert: (call) => {
      if (call.fn !== 'default') return null;
      const fixture = fixtureOf.get(call.raw[0]);
      const src = fixture ? { fixture: { repo: REPO, path: fixture.path, commit: core.commit } } : {};
      if (call.expectations.length === 0 && fixture && fixture.json.expectError !== undefined) {
        return { kind: 'validateMapping', input: { mapping: call.args[0] }, ...src, expected: { throws: true, errorMatches: [encode(fixture.json.expectError)] } };
      }
      return { kind: 'validateMapping', input: { mapping: call.args[0] }, ...src, expected: outcome(call) };
    },
  });
  return files;
}

// ---------------------------------------------------------------------------------------------

/**
 * The calls of one test, the same call made more than once (`expect(fn).toThrow(Error)` then
 * `expect(fn).toThrow('message')` run fn twice) merged into one with all its expectations.
 */
function merged(calls) {
  const byKey = new Map();
  for (const call of calls) {
    const key = JSON.stringify([call.fn, call.args]);
    const first = byKey.get(key);
    if (!first) byKey.set(key, call);
    else for (const e of call.expectations) if (!first.expectations.some((x) => JSON.stringify(x) === JSON.stringify(e))) first.expectations.push(e);
  }
  return [...byKey.values()];
}

const SKIP_REASONS = {
  getFieldValueKeys:
    "getFieldValueKeys lists the event fields a mapping reads (for Segment's enrichment UI); it decides nothing a mapping sends or whether it is accepted",
};

function main() {
  const a = args();
  const repoDir = a.repo;
  const subs = commitOf(repoDir, '@segment/destination-subscriptions', a.subscriptions, 'packages/destination-subscriptions');
  const core = commitOf(repoDir, '@segment/actions-core', a.core, 'packages/core');
  process.stdout.write(`@segment/destination-subscriptions@${subs.version}: ${subs.commit}\n@segment/actions-core@${core.version}: ${core.commit}\n`);

  const files = extract(repoDir, subs, core);
  const manifest = { repo: REPO, extractedBy: 'scripts/extract-segment-cases.mjs', packages: [subs, core], files: [] };
  let failed = false;
  for (const f of files) {
    const cases = [];
    const skipped = [];
    for (const t of f.ran) {
      if (t.error) {
        skipped.push({ test: t.name, reason: `the test body failed in the shim: ${t.error.message}` });
        failed = true;
      }
      for (const call of merged(t.calls)) {
        const c = f.convert(call);
        if (c === null) {
          skipped.push({ test: t.name, call: call.fn, args: call.args, reason: SKIP_REASONS[call.fn] ?? `no case kind for ${call.fn}` });
          continue;
        }
        if (!c.expected) {
          skipped.push({ test: t.name, call: call.fn, args: call.args, reason: 'a call with no expectation on its outcome' });
          continue;
        }
        cases.push({ id: `${f.out.replace(/\.json$/, '')}#${cases.length + 1}`, source: { repo: REPO, path: f.path, commit: f.upstream.commit, test: t.name }, ...c });
      }
      if (t.calls.length === 0 && !t.error) skipped.push({ test: t.name, reason: 'the test calls nothing under test' });
    }
    const data = {
      upstream: { repo: REPO, path: f.path, commit: f.upstream.commit, package: `${f.upstream.pkg}@${f.upstream.version}` },
      extractedBy: 'scripts/extract-segment-cases.mjs',
      tests: f.ran.length,
      cases,
      skipped,
    };
    const out = join(a.out, f.out);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(data, null, 2)}\n`);
    manifest.files.push({ file: f.out, upstream: data.upstream, tests: f.ran.length, cases: cases.length, skipped: skipped.length });
    process.stdout.write(`${f.path}: ${f.ran.length} tests, ${cases.length} cases, ${skipped.length} skipped -> ${posix.relative(root, out)}\n`);
    for (const s of skipped) process.stdout.write(`  skipped: ${s.test}${s.call ? ` (${s.call})` : ''}: ${s.reason}\n`);
  }
  writeFileSync(join(a.out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  if (failed) process.exitCode = 1;
}

main();
