import { controllerLog, parseLogFormat, parseLogLevel } from './controller-log';
import { LogFormatUnknown, LogLevelUnknown } from './log-errors';

function collected(options: Parameters<typeof controllerLog>[0]): { log: ReturnType<typeof controllerLog>; lines: () => string[] } {
  let text = '';
  const log = controllerLog({ ...options, write: (chunk) => (text += chunk) });
  return { log, lines: () => text.split('\n').filter((line) => line !== '') };
}

describe('the controller log', () => {
  test('as JSON writes one object per line with level, time and msg, and the fields beside them', () => {
    const { log, lines } = collected({ format: 'json' });
    log('sent node a its full declaration, generation 3 under epoch 7', { node: 'a', generation: 3, epoch: 7 });
    log('lease: lost under epoch 7: the key changed', { level: 'warn' });
    log('a line with "quotes", a newline\nand a tab\t in it');
    const parsed = lines().map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(parsed).toHaveLength(3);
    expect(parsed[0]).toMatchObject({ level: 'info', msg: 'sent node a its full declaration, generation 3 under epoch 7', node: 'a', generation: 3, epoch: 7 });
    expect(parsed[1]).toMatchObject({ level: 'warn', msg: 'lease: lost under epoch 7: the key changed' });
    expect(parsed[2]).toMatchObject({ level: 'info', msg: 'a line with "quotes", a newline\nand a tab\t in it' });
    for (const entry of parsed) expect(new Date(entry.time as string).toISOString()).toBe(entry.time);
  });

  test('a field named like the log\'s own cannot replace the sentence or the level', () => {
    const { log, lines } = collected({ format: 'json' });
    log('the real sentence', { level: 'error', msg: 'a forged sentence', time: 'yesterday', pid: 1 });
    const line = lines()[0] as string;
    const entry = JSON.parse(line) as Record<string, unknown>;
    expect(entry).toMatchObject({ level: 'error', msg: 'the real sentence', field_msg: 'a forged sentence', field_time: 'yesterday', field_pid: 1 });
    expect(entry.time).not.toBe('yesterday');
    // Each key once: a reader taking the first of two would otherwise see the forged one.
    expect(line.match(/"msg":/g)).toHaveLength(1);
    expect(line.match(/"time":/g)).toHaveLength(1);
  });

  test('drops lines below --log-level, in either format', () => {
    for (const format of ['json', 'human'] as const) {
      const { log, lines } = collected({ format, level: 'warn' });
      log('an info line');
      log('a debug line', { level: 'debug' });
      log('a warning', { level: 'warn' });
      log('an error', { level: 'error' });
      expect(lines()).toHaveLength(2);
      expect(lines().join('\n')).not.toMatch(/info line|debug line/);
    }
  });

  test('as text keeps the lines as they were: the UTC time, then the sentence, warnings saying so', () => {
    const { log, lines } = collected({});
    log('serving: epoch 4', { epoch: 4 });
    log('lease: could not be given back', { level: 'warn' });
    log('a debug line', { level: 'debug' });
    expect(lines()).toEqual([
      expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z serving: epoch 4$/),
      expect.stringMatching(/^\S+Z warn: lease: could not be given back$/),
    ]);
  });

  test('refuses a level or format it does not know, quoting it and naming those it does', () => {
    expect(() => parseLogLevel('verbose')).toThrow(LogLevelUnknown);
    expect(() => parseLogLevel('verbose')).toThrow(/"verbose"/);
    expect(() => parseLogFormat('logfmt')).toThrow(LogFormatUnknown);
    expect(new LogFormatUnknown('logfmt').next).toMatch(/human, json/);
    expect(parseLogLevel('WARN')).toBe('warn');
    expect(parseLogFormat('json')).toBe('json');
  });
});
