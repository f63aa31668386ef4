import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { themeBootScript } from './src/renderer/theme-boot';

/**
 * Puts src/renderer/first-page.js into index.html as an inline script, and its hash into the page's
 * script-src, so it runs without a request of its own (a cold visit paints the inspector's rows
 * sooner, a reload has nothing to revalidate) while the policy still refuses any other inline script.
 * The theme's boot script (src/renderer/theme-boot.ts) goes in the same way, made from its source so
 * the stored key and choices are the app's own: it sets the remembered theme before the first paint.
 */
function inlineScripts(): Plugin {
  const POLICY = "script-src 'self'";
  const scripts: { place: string; code: () => string }[] = [
    { place: '<!-- inline: theme-boot -->', code: () => themeBootScript() },
    { place: '<!-- inline: first-page.js -->', code: () => readFileSync(resolve(__dirname, 'src/renderer/first-page.js'), 'utf8') },
  ];
  return {
    name: 'webhook-lab:inline-scripts',
    transformIndexHtml(html) {
      if (!html.includes(POLICY)) throw new Error(`index.html needs a ${POLICY} policy`);
      const hashes: string[] = [];
      for (const { place, code: read } of scripts) {
        if (!html.includes(place)) throw new Error(`index.html needs ${place}`);
        const code = read();
        if (code.includes('</script')) throw new Error(`${place} cannot be inlined: it contains </script`);
        hashes.push(`'sha256-${createHash('sha256').update(code).digest('base64')}'`);
        html = html.replace(place, () => `<script>${code}</script>`);
      }
      return html.replace(POLICY, `${POLICY} ${hashes.join(' ')}`);
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
    plugins: [react(), inlineScripts()],
  },
});
