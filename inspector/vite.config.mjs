// Builds the inspector page (plain TypeScript + elkjs) into dist/inspector/, served by src/server.
// npm run build:inspector   (or: npx vite build --config inspector/vite.config.mjs)
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('.', import.meta.url));

export default {
  root,
  base: './',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/inspector/', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 4096,
    sourcemap: false,
  },
};
