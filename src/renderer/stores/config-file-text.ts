import { MAX_CONFIG_BYTES } from '../../shared/config.schema';

/**
 * A config as the file Export config writes: indented, to be read and edited, unless indenting would
 * take it over what a config file may be (`serve --config` refuses a larger file). A lab with large
 * tracking plans grows about fivefold when indented: a 4.2 MB plan made a 24 MB file it could not read
 * back. `problem` says when even the compact file is over the limit.
 */
export function configFileText(config: unknown, limit = MAX_CONFIG_BYTES): { text: string; problem: string | null } {
  const bytes = (s: string) => new TextEncoder().encode(s).length;
  const pretty = `${JSON.stringify(config, null, 2)}\n`;
  if (bytes(pretty) <= limit) return { text: pretty, problem: null };
  const text = `${JSON.stringify(config)}\n`;
  const size = bytes(text);
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return {
    text,
    problem: size <= limit ? null : `the config is ${mib(size)}, over the ${mib(limit)} a config file may be: it cannot be imported or given to serve --config whole (its tracking plans are most of it: move the largest through the control API: POST /api/tracking-plans with the name and rules GET /api/tracking-plans/:id answers, each under ${mib(limit)})`,
  };
}
