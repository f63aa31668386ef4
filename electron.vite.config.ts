import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';
import { build, type Plugin, type Rollup } from 'vite';
import react from '@vitejs/plugin-react';
import { themeBootScript } from './src/renderer/theme-boot';

const FIRST_PAGE = resolve(__dirname, 'src/renderer/first-page/first-page.ts');

/**
 * The first-page painter (src/renderer/first-page/first-page.ts) and the app modules it imports
 * (screens, call list columns, status chip words, formatters, token key), bundled as a second entry:
 * one minified IIFE, tree-shaken to what it uses, for inlineScripts to put into index.html.
 */
export async function firstPageScript(): Promise<string> {
  const result = await build({
    configFile: false,
    envDir: false,
    publicDir: false,
    logLevel: 'warn',
    root: resolve(__dirname, 'src/renderer'),
    build: {
      write: false,
      emptyOutDir: false,
      minify: true,
      reportCompressedSize: false,
      lib: { entry: FIRST_PAGE, formats: ['iife'], name: 'webhookLabFirstPage', fileName: () => 'first-page.js' },
    },
  });
  const outputs = (Array.isArray(result) ? result : [result]) as Rollup.RollupOutput[];
  const chunks = outputs.flatMap((o) => o.output).filter((o): o is Rollup.OutputChunk => o.type === 'chunk');
  if (chunks.length !== 1) throw new Error(`first-page.ts built into ${chunks.length} chunks, not one`);
  return chunks[0].code.trim();
}

/**
 * Puts the first-page painter (built by firstPageScript) into index.html as an inline script, and
 * its hash into the page's script-src, so it runs without a request of its own (a cold visit paints
 * the inspector's rows sooner, a reload has nothing to revalidate) while the policy still refuses
 * any other inline script. The theme's boot script (src/renderer/theme-boot.ts) goes in the same
 * way, made from its source so the stored key and choices are the app's own: it sets the remembered
 * theme before the first paint. The server's policy hashes the built page's inline scripts again
 * (src/main/server/ui-csp.ts), so it names whatever is inlined here.
 */
function inlineScripts(): Plugin {
  const POLICY = "script-src 'self'";
  const scripts: { place: string; code: () => string | Promise<string> }[] = [
    { place: '<!-- inline: theme-boot -->', code: () => themeBootScript() },
    { place: '<!-- inline: first-page -->', code: firstPageScript },
  ];
  return {
    name: 'webhook-lab:inline-scripts',
    async transformIndexHtml(html) {
      if (!html.includes(POLICY)) throw new Error(`index.html needs a ${POLICY} policy`);
      const hashes: string[] = [];
      for (const { place, code: read } of scripts) {
        if (!html.includes(place)) throw new Error(`index.html needs ${place}`);
        const code = await read();
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
      // The headless CLI, the client library and the testing module run under plain Node 20, not Electron's Node.
      target: 'node20',
      rollupOptions: {
        input: {
          index: resolve(__dirname, 'src/main/index.ts'),
          cli: resolve(__dirname, 'src/main/cli.ts'),
          client: resolve(__dirname, 'src/main/engine/client/index.ts'),
          // `webhook-lab/testing` (docs/testing.md): a lab in a test's own process.
          testing: resolve(__dirname, 'src/main/testing/index.ts'),
          // The tracking-plan check workers' code (issue 38): a file of its own, found beside the engine (worker-file.ts).
          'plan-check-worker': resolve(__dirname, 'src/main/engine/tracking-plans/check-worker.ts'),
          // The control API reads large bodies in a worker (body-pool.ts).
          'api-body-worker': resolve(__dirname, 'src/main/server/body-worker.ts'),
        },
        // What a start loads later (undici, the MCP SDK, selfsigned) is `require`d when first needed,
        // not `import()`ed: a CommonJS bundle's import() fails under Jest (webhook-lab/testing is used
        // there) and would load a package's ESM build beside the CJS one the rest requires. (worker-file.ts's
        // import of rolldown becomes a require too: only a run from source takes that path, never a build.)
        output: { dynamicImportInCjs: false },
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
