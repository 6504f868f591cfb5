import type { CodegenConfig } from '@graphql-codegen/cli';

// Typed operations from the gateway's SDL (`egs print-schema > schema/schema.graphql`). The
// output in src/gql/ is committed; CI regenerates it and fails on drift.
const config: CodegenConfig = {
  schema: '../../schema/schema.graphql',
  documents: ['src/**/*.{ts,tsx}', '!src/gql/**/*'],
  ignoreNoDocuments: true,
  generates: {
    './src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        scalars: { DateTime: 'string', Duration: 'string', ID: 'string', JSON: 'unknown' },
        enumsAsTypes: true,
        useTypeImports: true,
      },
    },
  },
};
export default config;
