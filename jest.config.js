/**
 * Jest runs the TypeScript sources directly through swc; type-checking is `npm run typecheck`.
 * The end-to-end suites (`*.e2e.test.ts`: real hosts, brokers and stores started as processes)
 * are left to `npm run e2e` (jest.e2e.config.cjs), so `npm test` stays within half an hour.
 */
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  moduleFileExtensions: ['ts', 'js', 'cjs', 'json'],
  testTimeout: 30000,
  testMatch: ['<rootDir>/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '\\.e2e\\.test\\.ts$'],
};
