import { parseArgs, type ParseArgsConfig } from 'node:util';

// What every command that drives a running lab over its control API (`load`, `check`) reads the
// same way: --api and --token, or WEBHOOK_LAB_API and WEBHOOK_LAB_TOKEN.

/** A command line that cannot run; the message names the flag. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs (strict) with --api, --token and --help added; its errors become UsageErrors. */
export function parseApiCommand<O extends Options>(argv: string[], options: O) {
  try {
    return parseArgs({
      args: argv,
      options: { ...options, api: { type: 'string' }, token: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const,
      strict: true,
    }).values as { [K in keyof O]?: O[K]['type'] extends 'boolean' ? boolean : string } & { api?: string; token?: string; help?: boolean };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** The control API to talk to: flags first, then the environment. */
export function apiTarget(values: { api?: string; token?: string }, env: Record<string, string | undefined>): { api: string; token: string } {
  const api = values.api ?? env.WEBHOOK_LAB_API;
  const token = values.token ?? env.WEBHOOK_LAB_TOKEN;
  if (!api) throw new UsageError('--api: give the control API URL (or set WEBHOOK_LAB_API); `webhook-lab serve` prints it');
  if (!token) throw new UsageError('--token: give the control API token (or set WEBHOOK_LAB_TOKEN)');
  return { api, token };
}
