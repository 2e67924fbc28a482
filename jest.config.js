// Three projects: unit tests run in parallel; integration and e2e tests, then reliability tests,
// share the real services (one Temporal dev server, one Redis) and run serially (DESIGN §5).
const transform = {
  '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }],
};
const base = { testEnvironment: 'node', transform, moduleFileExtensions: ['ts', 'js', 'json'] };

module.exports = {
  projects: [
    { ...base, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'] },
    {
      ...base,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts', '<rootDir>/test/e2e/**/*.test.ts'],
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
      slowTestThreshold: 30,
    },
    {
      // Fault injection on child processes (workers, API, Redis, PostgreSQL connections, Temporal
      // dev server): run serially after integration by scripts/test.sh (DESIGN §5).
      ...base,
      displayName: 'reliability',
      testMatch: ['<rootDir>/test/reliability/**/*.test.ts'],
      globalSetup: '<rootDir>/test/helpers/global-setup.ts',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.ts',
      slowTestThreshold: 60,
    },
  ],
  testTimeout: 60000,
};
