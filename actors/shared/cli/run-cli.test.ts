import { PassThrough } from 'node:stream';
import { Cli, Command } from 'clipanion';
import { MeshCommand, type CommandResult } from './mesh-command';
import { runCli } from './run-cli';

// A fault in a verb (anything not an OperatorError) said the way every failure is: text with
// its stack on stderr, and under --json one JSON document on stdout. A command line run in
// this process with streams of its own, since a real verb cannot be made to fault on demand.

class FaultyCommand extends MeshCommand {
  static override paths = [['fault']];
  static override usage = Command.Usage({ description: 'A verb with a bug in it' });
  async run(): Promise<CommandResult> {
    throw new TypeError('cannot read properties of undefined');
  }
}

async function run(argv: string[], make: () => Cli = () => Cli.from([FaultyCommand], { binaryName: 'tool', enableColors: false })) {
  const streams = { stdout: new PassThrough(), stderr: new PassThrough() };
  const text = (stream: PassThrough) => { let seen = ''; stream.on('data', (chunk) => { seen += String(chunk); }); return () => seen; };
  const [stdout, stderr] = [text(streams.stdout), text(streams.stderr)];
  const status = await runCli(make, argv, 'tool', streams);
  return { status, stdout: stdout(), stderr: stderr() };
}

describe('a fault in a verb', () => {
  test('under --json is one JSON document on stdout, with the stack on stderr, and exits 1', async () => {
    const result = await run(['fault', '--json']);
    expect(result.status).toBe(1);
    expect(JSON.parse(result.stdout)).toEqual({ error: { condition: 'InternalError', what: 'cannot read properties of undefined', next: expect.stringMatching(/fault in tool/), retryable: false } });
    expect(result.stderr).toMatch(/^internal error: TypeError: cannot read properties of undefined\n\s+at /);
  });

  test('without --json goes to stderr alone', async () => {
    const result = await run(['fault']);
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^internal error: TypeError/);
  });

  test('a verb whose code cannot load is said the same way', async () => {
    const result = await run(['fault', '--json'], () => { throw new Error('Cannot find module ./fault.command'); });
    expect(result.status).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { condition: 'InternalError', what: 'Cannot find module ./fault.command' } });
  });
});
