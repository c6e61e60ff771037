/** The end-to-end suites alone (`npm run e2e`): every `*.e2e.test.ts`, wherever it lives. */
const everyTest = require('./jest.config');

module.exports = {
  ...everyTest,
  testMatch: ['<rootDir>/**/*.e2e.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
};
