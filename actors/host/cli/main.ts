import type { Cli, CommandClass } from 'clipanion';
import { runningVersion } from '../../shared/version';
import { setRunProcessFlags } from '../run/run-process-flags';
import { quietOnClosedOutput } from '../../shared/cli/quiet-on-closed-output';
import { useDirectFileStdin } from '../../shared/cli/direct-file-stdin';
import { getDefaultColorDepth } from '../../shared/cli/clipanion-platform';
import { EXIT_STATUS_HELP } from '../../shared/cli/exit-status';
import { runCli } from '../../shared/cli/run-cli';
import { withExitStatusHelp } from '../../shared/cli/with-exit-status-help';
import { nameOptionPlaceholders } from '../../shared/cli/named-placeholders';

/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * Each verb's command, loaded when it is asked for, in the order help lists them. A command's
 * module brings everything its verb works with (the store's schemas, the NATS client,
 * the appliers), and in the bundle a module costs nothing until it is required: `version` then
 * starts in about half the time, and `run` on a machine that is not a node yet never loads the
 * code of one. `require` rather than `import()`: the checkout and the tests compile each file
 * to CommonJS, and esbuild turns a `require` it can see into a module it evaluates on demand.
 */
const VERBS = new Map<string, () => CommandClass>([
  ['version', () => (require('./version.command') as typeof import('./version.command')).VersionCommand],
  ['profile', () => (require('./profile.command') as typeof import('./profile.command')).ProfileCommand],
  ['inventory', () => (require('./inventory.command') as typeof import('./inventory.command')).InventoryCommand],
  ['owned', () => (require('./owned.command') as typeof import('./owned.command')).OwnedCommand],
  ['apply', () => (require('./apply.command') as typeof import('./apply.command')).ApplyCommand],
  ['reconcile', () => (require('./reconcile.command') as typeof import('./reconcile.command')).ReconcileCommand],
  ['bundle', () => (require('./bundle.command') as typeof import('./bundle.command')).BundleCommand],
  ['briefing', () => (require('./briefing.command') as typeof import('./briefing.command')).BriefingCommand],
  ['enrol', () => (require('./enrol.command') as typeof import('./enrol.command')).EnrolCommand],
  ['run', () => (require('./run.command') as typeof import('./run.command')).RunCommand],
  ['status', () => (require('./status.command') as typeof import('./status.command')).StatusCommand],
  ['tree', () => (require('./tree.command') as typeof import('./tree.command')).TreeCommand],
  ['completion', () => (require('../../shared/cli/completion.command') as typeof import('../../shared/cli/completion.command')).completionCommand('nox-mesh-host')],
]);
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * The `nox-mesh-host` command line: the verbs a person at the machine uses. Given the verb a
 * command line starts with, only that verb is registered, and only its code is loaded; without
 * one (help, a mistyped verb, options first) every verb is, so clipanion can list and suggest
 * them as it always has.
 *
 * Colour is decided here, the same from the checkout's bin/ as in the bundle (whose clipanion
 * platform is actors/shared/cli/clipanion-platform.ts): only a terminal, or FORCE_COLOR, gets
 * escape codes. clipanion's own platform would colour help and errors piped into a file or
 * `grep` whenever TERM names a colour terminal.
 */
export function hostCli(verb?: string, stdout: Pick<NodeJS.WriteStream, 'isTTY'> & Partial<Pick<NodeJS.WriteStream, 'getColorDepth'>> = process.stdout): Cli {
  // Loaded here, not at the top: clipanion reads process.stdin as it loads (see main).
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Builtins, Cli } = require('clipanion') as typeof import('clipanion');
  const cli = new Cli({
    binaryLabel: 'Novox Mesh node host',
    binaryName: 'nox-mesh-host',
    binaryVersion: runningVersion(),
    enableColors: getDefaultColorDepth(stdout) > 1,
  });
  cli.register(Builtins.HelpCommand);
  cli.register(Builtins.VersionCommand);
  // Completion lists every verb, so it loads them all.
  const only = verb === undefined || verb === 'completion' ? undefined : VERBS.get(verb);
  for (const load of only === undefined ? VERBS.values() : [only]) cli.register(withExitStatusHelp(load(), EXIT_STATUS_HELP));
  return nameOptionPlaceholders(cli);
}

/** Runs the CLI on this process's arguments and exits with the verb's status. */
export function main(): void {
  quietOnClosedOutput();
  const argv = process.argv.slice(2);
  // Before the verb's code is loaded: the young generation grows while modules load, and the
  // optimizing compiler must never start.
  if (argv[0] === 'run') setRunProcessFlags();
  // Before clipanion loads and reads it (see useDirectFileStdin).
  useDirectFileStdin();
  void runCli(() => hostCli(argv[0]), argv, 'nox-mesh-host').then((status) => {
    process.exitCode = status;
  });
}
