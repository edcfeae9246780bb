import { defineConfig } from 'vite';

// The page (page/index.html and its script) is bundled into dist/: everything it loads, the
// AI SDK's chat client included, is served by server.ts; nothing comes from a CDN.
export default defineConfig({
  root: 'page',
  logLevel: 'warn',
  build: { outDir: '../dist', emptyOutDir: true },
});
