import { INPUT_TOO_DEEP, MAX_INPUT_DEPTH, pathPastDepth } from './nesting';
import { formatPath, ValidationError } from './validation-error';

/** Keys of the path to a too-deep value that are named (deeper ones only repeat the nesting). */
const NAMED_KEYS = 6;

/**
 * The 400 for an operation's input nested past MAX_INPUT_DEPTH, naming where; null when it is not.
 * The control API and IPC run it on every payload before the operation's schema (one place each,
 * both generated from the contract), so no route can be added without it.
 */
export function inputTooDeep(input: unknown): ValidationError | null {
  const path = pathPastDepth(input, MAX_INPUT_DEPTH);
  return path ? new ValidationError([{ path: formatPath(path.slice(0, NAMED_KEYS)), message: INPUT_TOO_DEEP }]) : null;
}
