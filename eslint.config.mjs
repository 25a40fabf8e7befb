import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'cdk.out/',
      '.local/',
      'coverage/',
      'bench/out/',
      'clients/typescript/dist/',
      'clients/typescript/src/schema.ts',
      'reports/',
      '.stryker-tmp/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // Handler code is bundled per function. zod classic costs ~91 KiB and ~16 ms of init CPU per
    // bundle, `zod/mini` builds the same schemas in ~24 KiB; and a named `z` import pulls all of
    // the package past esbuild's tree-shaking (about 355 KiB). Measured in bench/README.md.
    files: ['lambdas/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "ImportDeclaration[importKind='value'][source.value=/^zod(\\/v4|\\/v4\\/classic|\\/v3)?$/]",
          message:
            "Use `import * as z from 'zod/mini'`: classic zod adds ~91 KiB and ~16 ms of init to every bundle (bench/README.md).",
        },
        {
          selector:
            "ImportDeclaration[source.value='zod/mini'][importKind='value'] > ImportSpecifier[imported.name='z'][importKind='value']",
          message: "Use `import * as z from 'zod/mini'` so bundles stay small (bench/README.md).",
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: {
      globals: { module: 'writable', require: 'readonly', __dirname: 'readonly', process: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
