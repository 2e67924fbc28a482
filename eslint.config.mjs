// typescript-eslint with type information, and the import directions of DESIGN §2 (which folder
// may import which; workflows/ only the workflow SDK, their own folder and types, so the sandbox
// stays deterministic), generated from the table in import-directions.mjs.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { importDirections } from './import-directions.mjs';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.agentry/**',
      '.jest-cache/**',
      '.jest-cache-*/**',
      'coverage/**',
      '**/*.js',
      '*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Tests read JSON bodies of many shapes.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  ...importDirections(),
);
