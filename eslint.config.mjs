// Lint: typescript-eslint's recommended rules everywhere, and the fence around machines/:
// machines are pure (no I/O, no clock, no randomness), so nothing under machines/ may import
// node:*, pg, @nats-io/* or libsodium-wrappers, nor touch process, console, Date.now,
// new Date() or Math.random. Time and chance reach a machine only through provided delays and
// actors. tests/lint-fence.test.ts proves the fence fails on a file that breaks it.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export const machineFence = {
  files: ['machines/**/*.ts'],
  ignores: ['machines/**/*.test.ts'],
  rules: {
    'no-restricted-imports': ['error', {
      patterns: [
        { group: ['node:*'], message: 'machines/ is pure: no node:* imports. Do the I/O in an actor under actors/ and provide it.' },
        { group: ['fs', 'fs/*', 'path', 'os', 'child_process', 'net', 'tls', 'crypto', 'http', 'https', 'timers', 'timers/*'], message: 'machines/ is pure: Node built-ins belong in actors/.' },
        { group: ['pg', 'pg/*', '@electric-sql/*'], message: 'machines/ is pure: the store is reached from an actor under actors/.' },
        { group: ['@nats-io/*'], message: 'machines/ is pure: the bus is reached from an actor under actors/.' },
        { group: ['libsodium-wrappers', 'libsodium-wrappers/*'], message: 'machines/ is pure: crypto lives in actors/shared/crypto.' },
        { group: ['**/actors/**'], message: 'machines/ may not import actors/: actors provide machines, not the other way round.' },
      ],
    }],
    'no-restricted-globals': ['error',
      { name: 'process', message: 'machines/ is pure: read configuration in the actor and pass it as input.' },
      { name: 'console', message: 'machines/ is pure: emit an event or record it in context instead of logging.' },
      { name: 'setTimeout', message: 'machines/ is pure: use `after` with a named delay so the clock can be simulated.' },
      { name: 'setInterval', message: 'machines/ is pure: use `after` with a named delay so the clock can be simulated.' },
      { name: 'require', message: 'machines/ is pure: import only xstate, schema/ types and machine helpers.' },
    ],
    'no-restricted-properties': ['error',
      { object: 'Date', property: 'now', message: 'machines/ has no clock: time comes from the actor system (provided delays, event payloads).' },
      { object: 'Math', property: 'random', message: 'machines/ has no randomness: jitter comes in through provided delays.' },
      { object: 'performance', property: 'now', message: 'machines/ has no clock.' },
    ],
    'no-restricted-syntax': ['error',
      { selector: "NewExpression[callee.name='Date']", message: 'machines/ has no clock: pass times in events or input.' },
      { selector: "CallExpression[callee.name='Date']", message: 'machines/ has no clock: pass times in events or input.' },
    ],
  },
};

// The host's idle memory (goal: 50 MB) counts every built-in module it loads, for as long as it
// runs. node:fs/promises loads readline, the file watchers and the directory iterator with it
// (about 0.45 MB); the performance global loads perf_hooks. Host code, and the shared code the
// host bundles, uses actors/shared/fs/promised-fs and actors/shared/time/monotonic-ms instead.
const noFsPromises = 'the host does not load node:fs/promises (it brings readline and the file watchers, some 0.45 MB of the idle host): import from actors/shared/fs/promised-fs';
// Date.prototype.toISOString sets up the local time zone through ICU first, even for UTC,
// which pages in some 0.6 MB of the Node binary's time-zone data for the life of the process.
const noToIsoString = 'the host does not format times with toISOString (it pages in ICU time-zone data, some 0.6 MB of the idle host): use utcTimestamp from actors/shared/time/utc-timestamp';
// The controller's log and metrics libraries (pino, prom-client) are the controller's alone: the
// host has the memory budget, and no listening socket, so neither it nor the shared code it
// bundles loads them, nor an HTTP server.
const controllerOnly = 'the host does not load the controller\'s log and metrics libraries (its memory budget is 50 MB, and it listens on no socket): log with the host\'s own log, and keep metrics in actors/controller';
const noHttpServer = 'the host listens on no socket: it reaches the controller over the bus only';
export const hostMemoryFence = {
  files: ['actors/host/**/*.ts', 'actors/shared/**/*.ts'],
  ignores: ['**/*.test.ts', '**/testing/**'],
  rules: {
    'no-restricted-imports': ['error', {
      paths: [
        { name: 'node:fs/promises', message: noFsPromises },
        { name: 'fs/promises', message: noFsPromises },
        { name: 'node:fs', importNames: ['promises'], message: noFsPromises },
        { name: 'fs', importNames: ['promises'], message: noFsPromises },
        { name: 'node:perf_hooks', message: 'the host does not load perf_hooks: time a span with monotonicMs (actors/shared/time/monotonic-ms)' },
        { name: 'node:http', message: noHttpServer },
        { name: 'http', message: noHttpServer },
        { name: 'node:https', message: noHttpServer },
        { name: 'https', message: noHttpServer },
      ],
      patterns: [{ group: ['pino', 'pino/*', 'pino-*', 'prom-client', 'prom-client/*'], message: controllerOnly }],
    }],
    'no-restricted-globals': ['error',
      { name: 'performance', message: 'the host does not load perf_hooks: time a span with monotonicMs (actors/shared/time/monotonic-ms)' },
    ],
    'no-restricted-properties': ['error',
      { object: 'fs', property: 'promises', message: noFsPromises },
      { property: 'toISOString', message: noToIsoString },
    ],
  },
};

// Layers. The controller and the host are two programs that meet only on the bus and in schema/
// (the contracts), so neither imports the other's code; what both need lives in actors/shared/,
// which imports neither side; schema/ imports nothing from actors/. Static imports are fenced
// with @typescript-eslint/no-restricted-imports (a rule of its own, so it does not replace the
// host memory fence's no-restricted-imports on the same files), and require(), import() and
// `typeof import()` with no-restricted-syntax. Tests under actors/ are left out: a test is where
// the two sides are checked against each other (the host's intake against the controller's
// repair), and tests/broker/ holds the broker every side's tests share, started with the
// controller's own broker code. schema/'s tests are fenced too: a contract is tested without any
// actor.
// tests/lint-fence.test.ts proves each fence fails on a file that breaks it.
const crossing = (side) => `(^|\\u002F)${side}(\\u002F|$)`;
function layerFence(files, sides, message, options = {}) {
  // A regular expression: a path segment named for the other side, wherever it sits.
  const regex = `(^|/)(${sides.join('|')})(/|$)`;
  return {
    files,
    ignores: [...(options.withTests ? [] : ['**/*.test.ts']), ...(options.ignores ?? [])],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: [{ regex, message }] }],
      'no-restricted-syntax': ['error', ...sides.flatMap((side) => [
        { selector: `CallExpression[callee.name='require'][arguments.0.value=/${crossing(side)}/]`, message },
        { selector: `ImportExpression[source.value=/${crossing(side)}/]`, message },
        { selector: `TSImportType[argument.literal.value=/${crossing(side)}/]`, message },
      ])],
    },
  };
}

export const layerFences = [
  layerFence(['actors/controller/**/*.ts'], ['host'], 'the controller does not import host code: move what both sides need to actors/shared/ (or schema/ for a contract).'),
  layerFence(['actors/host/**/*.ts'], ['controller'], 'the host does not import controller code: move what both sides need to actors/shared/ (or schema/ for a contract).'),
  layerFence(['actors/shared/**/*.ts'], ['host', 'controller'], 'actors/shared/ imports neither the host nor the controller: both import it. Move the code it needs here, or keep it on its side.'),
  layerFence(['schema/**/*.ts'], ['actors'], 'schema/ imports nothing from actors/: the contracts come first and actors import them. Move what the contract needs into schema/.', { withTests: true }),
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'coverage/**', 'docs/**', '**/fixtures/**', 'bench/results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: { process: 'readonly', console: 'readonly', require: 'readonly', module: 'writable', __dirname: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', URL: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', queueMicrotask: 'readonly', structuredClone: 'readonly', performance: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.cjs', 'bin/*'],
    languageOptions: { sourceType: 'commonjs' },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  machineFence,
  hostMemoryFence,
  ...layerFences,
);
