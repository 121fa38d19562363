// Lint rules: typescript-eslint's recommended set. (Biome was tried first; its per-platform
// binaries are not all on the registry this project installs from, which breaks `npm ci`.)
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'bench-results/**', '**/.tap/**', 'k8s/**', 'deploy/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-control-regex': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  // k6 scripts run in k6's runtime, which provides these.
  { files: ['loadtest/k6/**'], languageOptions: { globals: { open: 'readonly', __ENV: 'readonly', __VU: 'readonly', __ITER: 'readonly' } } },
);
