/**
 * The fast tiers without the stores: pure specs beside the code and service tests with fake
 * ports (test/service). `npx jest -c jest.fast.config.js` runs them in seconds; `npm test`
 * (jest.config.js) runs them too, with everything else.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  globalSetup: undefined,
  globalTeardown: undefined,
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/service/**/*.test.ts'],
};
