import { Cli } from 'clipanion';
import { Writable } from 'node:stream';
import { notBuiltCommand } from './not-built';

// A verb that is planned but not built says so and exits 3, rather than pretending or failing
// with a stack trace. (Every verb of both CLIs is built today; this keeps the convention honest
// for the next one.)

function collector(): Writable & { text: string } {
  const sink = new Writable({ write(chunk, _encoding, done) { sink.text += String(chunk); done(); } }) as Writable & { text: string };
  sink.text = '';
  return sink;
}

test('a verb that is not built yet says so, names what brings it, and exits 3 without a stack', async () => {
  const cli = new Cli({ binaryName: 'probe' });
  cli.register(notBuiltCommand(['frobnicate'], 'the frobnication issue'));
  const stdout = collector();
  const stderr = collector();
  const code = await cli.run(['frobnicate', '--anything'], { stdout, stderr, stdin: process.stdin });
  expect(code).toBe(3);
  expect(stderr.text).toBe('error: `frobnicate` is not built yet\nnext:  it arrives with the frobnication issue; see the README for what works today\n');
  expect(stdout.text).toBe('');
});
