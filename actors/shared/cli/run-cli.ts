import type { Writable } from 'node:stream';
import type { Cli, Command } from 'clipanion';
import { reportFailure } from './report-failure';

/** The process's streams, or a test's. */
export interface CliStreams {
  stdout: Writable;
  stderr: Writable;
}

/**
 * Runs a command line and returns its exit status. clipanion's own `run` prints a command line
 * it cannot make sense of (an unknown verb, a missing value) on stdout with status 1, and
 * under `--json` as text: here it goes to stderr with status 2, and under `--json` stdout gets
 * one JSON document for it too (see reportFailure). What a verb itself does, and its failures,
 * are the verb's (MeshCommand); help is printed by clipanion as before. `make` builds the
 * command line (loading the verb's code), so that a fault there is said like the others too.
 */
export async function runCli(make: () => Cli, argv: string[], binaryName: string, streams: CliStreams = process): Promise<number> {
  let cli: Cli;
  try {
    cli = make();
  } catch (error) {
    // A verb's code that cannot even load is a fault like any other, said the same way.
    return reportFailure(error, { ...streams, json: wantsJson(argv), binaryName });
  }
  let command: Command;
  try {
    command = cli.process(argv, streams);
  } catch (error) {
    return reportFailure(error, {
      ...streams,
      json: wantsJson(argv),
      binaryName: cli.binaryName,
      usageText: (usage) => cli.error(usage),
    });
  }
  return cli.run(command, streams);
}

/** Whether a command line asks for JSON, read before it is understood (it may not be). */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}
