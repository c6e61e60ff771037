import { PassThrough } from 'node:stream';
import tty from 'node:tty';
import { getCaptureActivator, getDefaultColorDepth } from './clipanion-platform';

describe('the host\'s clipanion platform', () => {
  const notATerminal = { isTTY: false as const };

  test('an output that is not a terminal is plain, whatever TERM says', () => {
    expect(getDefaultColorDepth(notATerminal, {})).toBe(1);
    expect(getDefaultColorDepth(notATerminal, { TERM: 'xterm-256color', COLORTERM: 'truecolor' })).toBe(1);
    expect(getDefaultColorDepth(notATerminal, { FORCE_COLOR: '0' })).toBe(1);
  });

  test('FORCE_COLOR gives the depth Node gives it', () => {
    for (const force of ['1', '2', '3', '']) {
      const env = { FORCE_COLOR: force };
      expect(getDefaultColorDepth(notATerminal, env)).toBe(tty.WriteStream.prototype.getColorDepth(env));
    }
    expect(getDefaultColorDepth(notATerminal, { FORCE_COLOR: '3' })).toBe(24);
  });

  test('a terminal is asked itself, with the environment', () => {
    const asked: NodeJS.ProcessEnv[] = [];
    const terminal = { isTTY: true as const, getColorDepth: (env?: object) => { asked.push(env as NodeJS.ProcessEnv); return 8; } };
    expect(getDefaultColorDepth(terminal, { TERM: 'xterm' })).toBe(8);
    expect(asked).toEqual([{ TERM: 'xterm' }]);
  });

  test('captures nothing for a command that writes to the process\'s own streams', () => {
    expect(getCaptureActivator({ stdout: process.stdout, stderr: process.stderr })).toBeNull();
  });

  test('sends what is written to the process\'s stdout while a command runs to that command\'s stream, and only then', async () => {
    const own = { stdout: new PassThrough(), stderr: new PassThrough() };
    const command = { stdout: new PassThrough(), stderr: new PassThrough() };
    const text = (stream: PassThrough) => { let seen = ''; stream.on('data', (chunk) => { seen += String(chunk); }); return () => seen; };
    const [ownOut, commandOut] = [text(own.stdout), text(command.stdout)];
    const activate = getCaptureActivator(command, own);
    expect(activate).not.toBeNull();
    const write = (line: string) => new Promise<void>((resolve) => own.stdout.write(line, () => resolve()));
    await activate!(() => write('captured\n'));
    await write('not captured\n');
    expect(commandOut()).toBe('captured\n');
    expect(ownOut()).toBe('not captured\n');
  });
});
