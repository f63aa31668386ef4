import type { z } from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface OpDef<I extends z.ZodType = z.ZodType, O = unknown> {
  method: HttpMethod;
  /** Path under /api; `:name` segments are filled from the input field of that name. */
  path: string;
  input: I;
  /** The most bytes its HTTP body may have, when more than the control API's 2 MB (a config, a tracking plan). */
  bodyLimit?: number;
  /**
   * The answer's shape as a zod schema (issue 43: every operation declares one; readers parse answers
   * with it, and tests/integration/api-output-schemas.test.ts holds it to what the engine answers).
   */
  output: z.ZodType;
  /** Phantom: carries the output type only. */
  readonly __output?: O;
}

/** `op<Output>()(method, path, inputSchema, { output })`: the output type is given, the input type inferred. */
export const op =
  <O>() =>
  <I extends z.ZodType>(method: HttpMethod, path: string, input: I, options: { bodyLimit?: number; output: z.ZodType }): OpDef<I, O> => ({ method, path, input, ...options });
