import { z } from 'zod';

/**
 * A yes/no parameter that may arrive as query-string text (`body=1`, `body=true`) or, over IPC, as a
 * boolean. z.coerce.boolean would read "0" and "false" as true.
 */
export const flagParam = z.preprocess((v) => (v === '1' || v === 'true' ? true : v === '0' || v === 'false' ? false : v), z.boolean());
