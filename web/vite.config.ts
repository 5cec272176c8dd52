import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The root package runs `vite build --config web/vite.config.ts`, so every path is anchored to this folder
// rather than to the caller's working directory.
const webDir = fileURLToPath(new URL('.', import.meta.url));

// Dev and preview servers forward API calls to a locally running `clinagent` server (default port 3000),
// so the console talks to the same origin it will in production.
const apiProxy = { '/api': { target: 'http://127.0.0.1:3000', changeOrigin: true } };

export default defineConfig({
  root: webDir,
  base: '/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true },
  server: { proxy: apiProxy },
  preview: { proxy: apiProxy },
});
