// ESLint for the page: typescript-eslint's strict, type-checked rules over the TypeScript
// (src, mock, unit tests, Vite configs), the recommended rules over the plain JavaScript
// (the browser test). Formatting is Prettier's job (`npm run format:check`), not ESLint's.
// `src/types.ts` is left out: it is generated from the Rust types (src-tauri/src/bindings.rs),
// and a test that it is current guards it; the views that use its types are linted with them.

import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig([
  globalIgnores(['dist/', 'dist-mock/', 'node_modules/', 'src/types.ts']),
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, tseslint.configs.strictTypeChecked, tseslint.configs.stylisticTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Numbers read naturally in messages ("3 unread"); other values must be turned into
      // words on purpose.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // With `noUncheckedIndexedAccess`, `list[i]!` on an index known to be in range is the
      // honest way to say so; an absent element then fails loudly where it is used.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // `() => show(view)` in a listener is clear enough.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // `string[]`, but `Array<'user' | 'local'>` where the element type is not a plain name.
      '@typescript-eslint/array-type': ['error', { default: 'array-simple' }],
      // Its fix turns `querySelector(...) as HTMLButtonElement` into `querySelector(...)!`,
      // which loses the element type TypeScript inferred from the assertion.
      '@typescript-eslint/non-nullable-type-assertion-style': 'off',
    },
  },
  {
    files: ['mock/**/*.ts', 'tests/**/*.ts'],
    rules: {
      // Tauri commands reject with the error's message, a string; the mocks do the same.
      '@typescript-eslint/only-throw-error': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
      // `vi.fn(async () => value)` stands in for a command that returns a promise.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // Text only: data never becomes markup (src/dom.ts builds every element).
      'no-restricted-syntax': [
        'error',
        {
          selector: 'AssignmentExpression > MemberExpression.left[property.name=/^(innerHTML|outerHTML)$/]',
          message: 'Build elements with h() from src/dom.ts; never write markup from data.',
        },
        {
          selector: 'CallExpression > MemberExpression.callee[property.name=/^(insertAdjacentHTML|write|writeln)$/]',
          message: 'Build elements with h() from src/dom.ts; never write markup from data.',
        },
      ],
    },
  },
  {
    files: ['**/*.{js,mjs}'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
]);
