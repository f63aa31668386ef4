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
   * The answer's shape as a zod schema, where it is declared (issue 39: the operations the MCP tools
   * answer with; the others carry their output type only, for now).
   */
  output?: z.ZodType;
  /** Phantom: carries the output type only. */
  readonly __output?: O;
}

/** `op<Output>()(method, path, inputSchema)`: the output type is given, the input type inferred. */
export const op =
  <O>() =>
  <I extends z.ZodType>(method: HttpMethod, path: string, input: I, options: { bodyLimit?: number; output?: z.ZodType } = {}): OpDef<I, O> => ({ method, path, input, ...options });
