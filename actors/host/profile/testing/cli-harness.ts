import { Writable } from 'node:stream';
import { Builtins, Cli, type CommandClass } from 'clipanion';
import type { CommandRunner } from '../../../shared/process/command-runner';
import type { RunnerContext } from '../runner-context';

/** What a verb run in-process printed, and its exit status. */
export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `argv` through a `nox-mesh-host` command line holding only `commands` (and help), in
 * this process, collecting what it writes; `runner` stands in for real processes.
 */
export async function runVerb(commands: CommandClass<RunnerContext>[], argv: string[], runner?: CommandRunner): Promise<CliOutcome> {
  const cli = new Cli<RunnerContext>({ binaryName: 'nox-mesh-host' });
  cli.register(Builtins.HelpCommand);
  for (const command of commands) cli.register(command);
  const stdout = new TextCollector();
  const stderr = new TextCollector();
  const code = await cli.run(argv, { stdout, stderr, colorDepth: 1, ...(runner === undefined ? {} : { runner }) });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

class TextCollector extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += chunk.toString();
    done();
  }
}
