import { PassThrough } from 'node:stream';
import { Cli, type CommandClass } from 'clipanion';
import { nameOptionPlaceholders } from '../../../shared/cli/named-placeholders';

/** What a command printed and the status it ended with. */
export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs one `mesh-control` command class in this process on `args`, as the CLI would, and
 * returns what it wrote and its exit status: for tests of what a verb refuses before it asks the
 * controller anything. Help is rendered as when piped (no colour, whatever the terminal running
 * the tests), with option values named as the real CLI names them.
 */
export async function runCommand(command: CommandClass, args: string[]): Promise<CommandRun> {
  const cli = new Cli({ binaryName: 'mesh-control', enableColors: false });
  cli.register(command);
  nameOptionPlaceholders(cli);
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: string[] = [];
  const err: string[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk.toString('utf8')));
  stderr.on('data', (chunk: Buffer) => err.push(chunk.toString('utf8')));
  const code = await cli.run(args, { stdin: process.stdin, stdout, stderr });
  return { code, stdout: out.join(''), stderr: err.join('') };
}
