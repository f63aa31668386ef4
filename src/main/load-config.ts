import { readFileSync } from 'node:fs';
import { configSchema, type Config } from '../shared/config.schema';
import { describeErrors, fieldErrors } from '../shared/validation-error';

export class ConfigError extends Error {}

/** Reads and validates a config file; every problem is reported with the path of the bad field. */
export function loadConfigFile(path: string): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  const r = configSchema.safeParse(json);
  if (!r.success) {
    throw new ConfigError(`config file ${path} is invalid:\n  ${describeErrors(fieldErrors(r.error)).split('; ').join('\n  ')}`);
  }
  return r.data;
}
