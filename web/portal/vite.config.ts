import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The gateway embeds `web/dist/portal` and serves it at `/`. `npm run dev` proxies the API to a
// gateway on :8080 so the portal can be worked on with hot reload.
export default defineConfig({
  plugins: [react()],
  build: {
    outDir: '../dist/portal',
    emptyOutDir: true,
    // Stable names: the committed build only changes when its sources do.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1024,
  },
  server: {
    proxy: {
      '/graphql': { target: 'http://127.0.0.1:8080', ws: true },
    },
  },
  test: {
    environment: 'jsdom',
    globals: true,
    setupFiles: ['./src/test-setup.ts'],
    include: ['src/**/*.test.{ts,tsx}'],
  },
});
