import { defineConfig } from 'vite';

// The browser tests' build: the same UI with Tauri's IPC mocked, into `dist-mock/`.
export default defineConfig({
  clearScreen: false,
  base: './',
  build: { outDir: 'dist-mock', target: 'es2022', emptyOutDir: true, rolldownOptions: { input: 'mock/index.html' } },
});
