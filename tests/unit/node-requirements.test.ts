import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DESKTOP_NODE, desktopNodeHint } from '../../scripts/desktop-node.mjs';

// What the README and `engines` say about Node versions is what the installed packages ask for
// (issue 26: `npm install` printed EBADENGINE for a requirement the README did not state).

const root = join(__dirname, '..', '..');
const require = createRequire(join(root, 'package.json'));
const minimum = (range: string) => /(\d+\.\d+\.\d+)/.exec(range)?.[1];

describe('Node versions', () => {
  it('the desktop window needs what installed Electron declares; the README says both versions', () => {
    const electron = require('electron/package.json') as { engines: { node: string } };
    expect(minimum(electron.engines.node)).toBe(DESKTOP_NODE);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
    const [major, minor] = minimum(pkg.engines.node)!.split('.');
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).toContain(`Requirements: Node.js ${major}.${minor} or newer for the engine`);
    expect(readme).toContain(`Node.js ${DESKTOP_NODE.split('.').slice(0, 2).join('.')} or newer for the desktop window`);
  });

  it('npm start names the Node version when the desktop cannot start on an older one', () => {
    expect(desktopNodeHint('20.20.2')).toBe("; the desktop window needs Node.js 22.12 or newer (Electron 45's tools declare it), this is 20.20.2");
    expect(desktopNodeHint('22.11.9')).toContain('22.12');
    expect(desktopNodeHint('22.12.0')).toBe('');
    expect(desktopNodeHint('24.1.0')).toBe('');
  });
});
