import { defineConfig } from 'vite';

/**
 * The console is served by Gatehouse under `/console` with a strict CSP (no inline script, no other
 * origin), so the build emits only external, hashed files: no module-preload polyfill (Vite would
 * inline it) and no inlined assets as data: scripts.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
});
