import { defineConfig } from 'vite';

// The app's build: `dist/` is what src-tauri serves (no dev server in the built app).
export default defineConfig({
  clearScreen: false,
  build: { outDir: 'dist', target: 'es2022', emptyOutDir: true },
  test: { environment: 'jsdom', include: ['tests/unit/**/*.test.ts'] },
} as Parameters<typeof defineConfig>[0]);
