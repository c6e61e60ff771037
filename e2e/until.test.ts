import { done, NeverComing, notYet, until, WaitedTooLong } from './until';

describe('until', () => {
  test('returns what the look yields once the condition holds', async () => {
    let looks = 0;
    const value = await until('the third look', () => (++looks === 3 ? done('ready') : notYet(`look ${looks}`)), { intervalMs: 1 });
    expect([value, looks]).toEqual(['ready', 3]);
  });

  test('names what it waited for and what it last saw when the deadline passes', async () => {
    let looks = 0;
    const waiting = until('the file to appear', () => notYet(`look ${++looks}: no such file`), { timeoutMs: 30, intervalMs: 5 });
    await expect(waiting).rejects.toBeInstanceOf(WaitedTooLong);
    await expect(waiting).rejects.toThrow(new RegExp(`^waited 0 s for the file to appear; last seen:\\nlook ${looks}: no such file$`));
  });

  test('counts a look that throws as a miss and quotes its error', async () => {
    const waiting = until('a readable file', () => {
      throw new Error('ENOENT');
    }, { timeoutMs: 20, intervalMs: 5 });
    await expect(waiting).rejects.toThrow(/last seen:\nthe look failed: ENOENT$/);
  });

  test('gives up at once when the look says the condition can no longer come', async () => {
    const started = Date.now();
    const waiting = until('a line from a process', () => {
      throw new NeverComing('the process ended');
    }, { timeoutMs: 10_000 });
    await expect(waiting).rejects.toThrow('the process ended');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
