// Lets plain `node` run a TypeScript script that imports test helpers (the history recorder,
// scripts/record-histories.sh): every required .ts file is compiled by @swc/core, the same
// compiler and options jest uses (jest.config.js), so no build to dist/ is needed.
const { readFileSync } = require('node:fs');
const { transformSync } = require('@swc/core');

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(readFileSync(filename, 'utf8'), {
    filename,
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};
