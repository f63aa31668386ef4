import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { visit } from 'jsonc-parser';
import { configSchema, MAX_CONFIG_BYTES, type Config, type ConfigWarning } from '../shared/config.schema';
// Segment's mapping-kit and FQL checks, into the config schema (shared/actions/rules.ts).
import './engine/actions/rules';
import { inputTooDeep } from '../shared/input-depth';
import { describeErrors, fieldErrors, formatPath, type FieldError } from '../shared/validation-error';
import { printable } from './printable';

export class ConfigError extends Error {}

/** A config file larger than this is refused without being read (a real one is a few KB). */
export const MAX_CONFIG_FILE_BYTES = MAX_CONFIG_BYTES;

/**
 * Reads and validates a config file; every problem is reported with the path of the bad field.
 * Only a regular file is read (a FIFO, a device such as /dev/zero or a folder is refused before a
 * byte is read: opened without blocking, then fstat), at most MAX_CONFIG_FILE_BYTES, as UTF-8 with or
 * without a byte order mark; a key given twice in one object is refused (JSON.parse keeps the last).
 */
export function loadConfigFile(path: string): Config {
  return parseConfigText(readConfigText(path), `config file ${path}`);
}

export function readConfigText(path: string): string {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO for reading waits for a writer otherwise (Windows has no such flag).
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new ConfigError(`config file ${path} is not a regular file (it is ${kindOf(stat)}): give the path of a JSON file`);
    if (stat.size > MAX_CONFIG_FILE_BYTES) throw tooLarge(path);
    // One byte more than the cap, so a file that grew since fstat is still caught.
    const buf = Buffer.alloc(Math.min(stat.size + 1, MAX_CONFIG_FILE_BYTES + 1));
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, null);
    if (n > MAX_CONFIG_FILE_BYTES) throw tooLarge(path);
    try {
      // fatal: bytes that are not UTF-8 are refused, not replaced; the BOM, if any, is dropped.
      return new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(0, n));
    } catch {
      throw new ConfigError(`config file ${path} is not UTF-8 text (save it as UTF-8)`);
    }
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`);
  } finally {
    closeSync(fd);
  }
}

const tooLarge = (path: string) => new ConfigError(`config file ${path} is larger than ${MAX_CONFIG_FILE_BYTES / 1024 / 1024} MiB, the most a config file may be`);

function kindOf(s: Stats): string {
  if (s.isDirectory()) return 'a folder';
  if (s.isFIFO()) return 'a FIFO';
  if (s.isCharacterDevice() || s.isBlockDevice()) return 'a device';
  if (s.isSocket()) return 'a socket';
  return 'not a file';
}

/** A config as JSON text (a file's, once read): syntax, then depth, then duplicate keys, then the schema. */
export function parseConfigText(text: string, what: string): Config {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${what} is not valid JSON: ${(err as Error).message}`);
  }
  // One line per field, each escaped: a key or a name in the file (a newline, "; ") cannot start a line.
  const invalid = (fields: FieldError[]) => new ConfigError(`${what} is invalid:\n  ${fields.map((f) => printable(describeErrors([f]))).join('\n  ')}`);
  // Depth first, without recursion (as for the control API's input): the key scan and the schema recurse.
  const tooDeep = inputTooDeep(json);
  if (tooDeep) throw invalid(tooDeep.fields);
  const duplicates = keyProblems(text);
  if (duplicates.length > 0) throw invalid(duplicates);
  const r = configSchema.safeParse(json);
  if (!r.success) throw invalid(fieldErrors(r.error));
  return r.data;
}

/**
 * Every key given twice in one object, by its path, with the line of the second, and every key that
 * would become a prototype. jsonc-parser's visitor (VS Code's JSON scanner) walks the text, which
 * JSON.parse has already accepted; it recurses once per level, which the depth check before it bounds.
 */
export function keyProblems(text: string): FieldError[] {
  const { duplicates, prototypes } = scanKeys(text);
  return [...duplicates, ...prototypes];
}

/** The keys given twice in an object, and the keys JavaScript would take for a prototype. */
export function scanKeys(text: string): { duplicates: FieldError[]; prototypes: FieldError[]; dropped: FieldError[] } {
  const duplicates: FieldError[] = [];
  const prototypes: FieldError[] = [];
  const dropped: FieldError[] = [];
  const open: Set<string>[] = [];
  visit(text, {
    onObjectBegin: () => {
      open.push(new Set());
    },
    onObjectEnd: () => {
      open.pop();
    },
    onObjectProperty: (key, _offset, _length, line, _character, pathSupplier) => {
      const keys = open[open.length - 1];
      const path = pathSupplier();
      if (keys.has(key)) duplicates.push({ path: formatPath([...path, key]), message: `duplicate key (line ${line + 1}): JSON keeps only the last, so the first would be lost` });
      // An object's own "__proto__" (or "constructor"."prototype") becomes its prototype when copied:
      // the control API's parser refused such a body as "not valid JSON", a config file lost the key.
      // Inside an Actions mapping's data Segment's mapping kit takes the key and drops it from what it
      // sends: so does the lab, with a warning (issue 37: a refusal only where Segment refuses).
      if (key === '__proto__' && inMappingData(path)) {
        dropped.push({ path: formatPath([...path, key]), message: `key "__proto__" is dropped (line ${line + 1}): Segment's mapping kit drops it from what it sends, and so does the lab` });
      } else if (key === '__proto__' || (key === 'prototype' && path.at(-1) === 'constructor')) {
        prototypes.push({ path: formatPath([...path, key]), message: `key "${key}" is not accepted (line ${line + 1}): JavaScript reads it as an object's prototype, so it would be lost` });
      }
      keys.add(key);
    },
  });
  return { duplicates, prototypes, dropped };
}

/** Inside the `data` of an Actions mapping (`…mappings[n].data…`), where the mapping kit drops a `__proto__`. */
function inMappingData(path: readonly (string | number)[]): boolean {
  for (let i = 0; i + 2 < path.length; i++) {
    if (path[i] === 'mappings' && typeof path[i + 1] === 'number' && path[i + 2] === 'data') return true;
  }
  return false;
}

/** A config text's `__proto__` keys inside mapping data, which are dropped, as warnings. */
export function droppedKeyWarnings(text: string): ConfigWarning[] {
  let dropped: FieldError[];
  try {
    ({ dropped } = scanKeys(text));
  } catch {
    return [];
  }
  return droppedWarnings(dropped);
}

/** scanKeys' dropped keys as warnings. */
export function droppedWarnings(dropped: FieldError[]): ConfigWarning[] {
  return dropped.map((f) => ({ path: f.path, code: 'key_dropped' as const, message: f.message }));
}
