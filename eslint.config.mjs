import tseslint from 'typescript-eslint';

// Layering (DESIGN.md lesson 1), enforced rather than hoped for:
// - src/shared: no Node built-ins, no Electron, no React: it runs in the renderer and the engine.
// - src/main/engine: never Electron or React: it runs under plain Node (headless, tests).
// - src/renderer: never src/main or Node built-ins: it runs in a browser too. Inside it, only app.tsx
//   imports features/, and no feature imports another (shared widgets live in components/).
// - the collector and the store never import the dispatcher: a call goes collector -> store ->
//   dispatcher, and the dispatcher's planning rule reaches the store as a function (engine.ts).
const NODE_BUILTINS = ['node:*', 'fs', 'path', 'http', 'https', 'crypto', 'os', 'child_process', 'net', 'tls', 'stream', 'events', 'util', 'zlib', 'url', 'buffer'];

const ENGINE_PATTERNS = [
  { group: ['electron', 'electron/*'], message: 'The engine runs under plain Node: only src/main/index.ts and src/main/electron may import electron.' },
  { group: ['react', 'react-dom', '**/renderer/**'], message: 'The engine knows nothing of the UI.' },
];

const RENDERER_PATTERNS = [
  { group: ['**/main/**', 'electron', ...NODE_BUILTINS], message: 'The renderer runs in a browser: talk to the engine through the API client only.' },
];
const FEATURE_TO_FEATURE = 'A feature does not import another feature: move the shared widget or constant down to src/renderer/components (or a model to src/renderer/stores).';

export default tseslint.config(
  { ignores: ['out/**', 'node_modules/**', 'dist/**', 'test-results/**', 'playwright-report/**', 'bench/results/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: ['src/shared/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: NODE_BUILTINS, message: 'src/shared runs in the browser too: no Node built-ins.' },
        { group: ['electron', 'react', 'react-dom', '**/main/**', '**/renderer/**', '**/preload/**'], message: 'src/shared depends on nothing but itself and zod.' },
      ] }],
    },
  },
  {
    files: ['src/main/engine/**/*.ts', 'src/main/server/**/*.ts', 'src/main/cli.ts', 'src/main/cli-serve.ts', 'src/main/cli-usage.ts', 'src/main/cli-mcp.ts', 'src/main/testing/**/*.ts', 'src/main/mcp/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ENGINE_PATTERNS }],
    },
  },
  {
    // A later block replaces the rule's options for these files, so the engine's patterns come along.
    files: ['src/main/engine/collector/**/*.ts', 'src/main/engine/store/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        ...ENGINE_PATTERNS,
        { group: ['../dispatcher/*'], message: 'A call goes collector -> store -> dispatcher: the collector and the store never import the dispatcher (its planner is handed in, engine.ts).' },
      ] }],
    },
  },
  {
    files: ['src/main/engine/client/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['electron', 'react', '../store/*', '../collector/*', '../dispatcher/*', '../*.ts', '../engine*', '../app-*'], message: 'The client is published on its own (webhook-lab/client): it may import only itself and src/shared.' },
      ] }],
    },
  },
  {
    // Issue 22: a `void` promise of the dispatcher's ended the process on a full disk. No promise in
    // main is left without a handler: `void` does not count as one (ignoreVoid: false). The rule needs
    // type information (projectService), so it is on for src/main only, where it matters most.
    files: ['src/main/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
    },
  },
  {
    files: ['src/renderer/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': ['error', { patterns: RENDERER_PATTERNS }],
    },
  },
  {
    // Inside the renderer, imports run down only: app.tsx (the shell) imports the screens in
    // features/; a store, a component, the API client, the first page or another root module never
    // imports a feature, so a widget or constant two places need lives in components/ or stores/.
    files: ['src/renderer/**/*.{ts,tsx}'],
    ignores: ['src/renderer/app.tsx', 'src/renderer/features/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        ...RENDERER_PATTERNS,
        { regex: '(^|/)features(/|$)', message: 'Only app.tsx imports a feature: move what a store or a component needs from features/ down to components/ (widgets) or stores/ (models).' },
      ] }],
    },
  },
  {
    // Components (widgets, their pure helpers) sit below the stores (issue 43): a store may use a
    // component's helper (countOf), a component never reaches into a store's model; what both need
    // lives in components/ or src/shared.
    files: ['src/renderer/components/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        ...RENDERER_PATTERNS,
        { regex: '(^|/)features(/|$)', message: 'Only app.tsx imports a feature: move what a store or a component needs from features/ down to components/ (widgets) or stores/ (models).' },
        { regex: '(^|/)stores(/|$)', message: 'A component does not import a store: move what it needs down to components/ or src/shared (a store may import a component, not the other way).' },
      ] }],
    },
  },
  // A feature never imports another feature's files (a shared widget moves to components/): from
  // features/<name>/<depth…>/file, a relative path that climbs out of <name> and back into features/.
  ...[1, 2, 3].map((depth) => ({
    files: [`src/renderer/features/*/${'*/'.repeat(depth - 1)}*.{ts,tsx}`],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        ...RENDERER_PATTERNS,
        { regex: `^${'\\.\\./'.repeat(depth)}(?!\\.\\.(/|$))`, message: FEATURE_TO_FEATURE },
        { regex: '(^|/)features(/|$)', message: FEATURE_TO_FEATURE },
      ] }],
    },
  })),
);
