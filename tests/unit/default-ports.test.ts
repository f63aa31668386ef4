import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_COLLECTOR_PORT, DEFAULT_COLLECTOR_URL, DEFAULT_UI_PORT } from '../../src/shared/ports';
import { USAGE } from '../../src/main/cli-usage';
import { DEFAULTS } from '../../src/main/engine/client/constants';

// The default ports are stated once (src/shared/ports.ts, issue 43); what people read says the same.
describe('default ports', () => {
  it('the usage text, the client and the README say the ones the code uses', () => {
    expect(USAGE).toContain(`collector port (default ${DEFAULT_COLLECTOR_PORT};`);
    expect(USAGE).toContain(`web UI port (default ${DEFAULT_UI_PORT};`);
    expect(DEFAULTS.endpoint).toBe(DEFAULT_COLLECTOR_URL);
    const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    expect(readme).toContain(`127.0.0.1:${DEFAULT_COLLECTOR_PORT}`);
    expect(readme).toContain(`127.0.0.1:${DEFAULT_UI_PORT}`);
  });
});
