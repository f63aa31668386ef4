import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';
import react from '@vitejs/plugin-react';

/**
 * Puts src/renderer/first-page.js into index.html as an inline script, and its hash into the page's
 * script-src, so it runs without a request of its own (a cold visit paints the inspector's rows
 * sooner, a reload has nothing to revalidate) while the policy still refuses any other inline script.
 */
function inlineFirstPage(): Plugin {
  const file = resolve(__dirname, 'src/renderer/first-page.js');
  const PLACE = '<!-- inline: first-page.js -->';
  const POLICY = "script-src 'self'";
  return {
    name: 'webhook-lab:inline-first-page',
    transformIndexHtml(html) {
      if (!html.includes(PLACE) || !html.includes(POLICY)) throw new Error(`index.html needs ${PLACE} and a ${POLICY} policy`);
      const code = readFileSync(file, 'utf8');
      if (code.includes('</script')) throw new Error('first-page.js cannot be inlined: it contains </script');
      const hash = createHash('sha256').update(code).digest('base64');
      return html.replace(POLICY, `${POLICY} 'sha256-${hash}'`).replace(PLACE, () => `<script>${code}</script>`);
    },
  };
}

export default defineConfig({
  main: {
    build: {
      // The headless CLI and the client library run under plain Node 20, not Electron's Node.
      target: 'node20',
      rollupOptions: {
        input: {
          index: resolve(__dirname, 'src/main/index.ts'),
          cli: resolve(__dirname, 'src/main/cli.ts'),
          client: resolve(__dirname, 'src/main/engine/client/index.ts'),
        },
      },
    },
  },
  preload: {
    build: {
      rollupOptions: { input: { index: resolve(__dirname, 'src/preload/index.ts') } },
    },
  },
  renderer: {
    root: resolve(__dirname, 'src/renderer'),
    build: {
      // The bundle is most of the time to first paint in web mode.
      minify: true,
      rollupOptions: { input: { index: resolve(__dirname, 'src/renderer/index.html') } },
    },
    plugins: [react(), inlineFirstPage()],
  },
});
