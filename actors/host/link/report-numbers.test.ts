import { emptyHostState, type HostState } from '../../../schema/host-state';
import { ReportNumbers, reportNumbersOf, type NumberedState } from './report-numbers';

// The store as far as numbering sees it: a state written through, counting its writes.
class CountingState implements NumberedState {
  writes = 0;
  failing = false;
  constructor(public state: HostState = emptyHostState()) {}
  async update(change: (state: HostState) => HostState): Promise<HostState> {
    await Promise.resolve();
    if (this.failing) throw new Error('the disk is full');
    this.writes += 1;
    this.state = change(this.state);
    return this.state;
  }
}

async function takeMany(numbers: ReportNumbers, count: number): Promise<number[]> {
  const taken: number[] = [];
  for (let index = 0; index < count; index += 1) taken.push(await numbers.take());
  return taken;
}

describe('report numbers', () => {
  test('rise by one from above what the store holds, each one stored before it is handed out', async () => {
    const state = new CountingState({ ...emptyHostState(), report_sequence: 7 });
    const numbers = new ReportNumbers(state, 4);
    const taken: number[] = [];
    for (let index = 0; index < 6; index += 1) {
      const number = await numbers.take();
      expect(state.state.report_sequence).toBeGreaterThanOrEqual(number);
      taken.push(number);
    }
    expect(taken).toEqual([8, 9, 10, 11, 12, 13]);
  });

  test('a block of numbers costs one store write', async () => {
    const state = new CountingState();
    const numbers = new ReportNumbers(state, 64);
    await takeMany(numbers, 64);
    expect(state.writes).toBe(1);
    expect(await numbers.take()).toBe(65);
    expect(state.writes).toBe(2);
  });

  test('a host started again over the same store begins above every number the last one could have used', async () => {
    const state = new CountingState({ ...emptyHostState(), report_sequence: 40 });
    const before = await takeMany(new ReportNumbers(state, 16), 3);
    // The process is gone; the next one has only the store.
    const after = await takeMany(new ReportNumbers(new CountingState(state.state), 16), 3);
    expect(before).toEqual([41, 42, 43]);
    expect(Math.min(...after)).toBeGreaterThan(Math.max(...before));
    expect(after).toEqual([57, 58, 59]);
  });

  test('numbers asked for at once, while a block is being reserved, are all different and in the order asked', async () => {
    const state = new CountingState();
    const numbers = new ReportNumbers(state, 2);
    const taken = await Promise.all(Array.from({ length: 5 }, () => numbers.take()));
    expect(taken).toEqual([1, 2, 3, 4, 5]);
    expect(state.writes).toBe(3);
  });

  test('when the store cannot be written no number is handed out, and the next try starts where the store is', async () => {
    const state = new CountingState({ ...emptyHostState(), report_sequence: 3 });
    const numbers = new ReportNumbers(state, 8);
    state.failing = true;
    await expect(numbers.take()).rejects.toThrow('the disk is full');
    state.failing = false;
    expect(await numbers.take()).toBe(4);
  });

  test('reserving ahead writes only when no number is left', async () => {
    const state = new CountingState();
    const numbers = new ReportNumbers(state, 2);
    await numbers.reserveAhead();
    await numbers.reserveAhead();
    expect(state.writes).toBe(1);
    expect(await takeMany(numbers, 2)).toEqual([1, 2]);
    expect(state.writes).toBe(1);
    await numbers.reserveAhead();
    expect(state.writes).toBe(2);
  });

  test('one state handle has one numbering, so two senders on it never interleave their blocks', async () => {
    const state = new CountingState();
    const other = new CountingState();
    expect(reportNumbersOf(state)).toBe(reportNumbersOf(state));
    expect(reportNumbersOf(other)).not.toBe(reportNumbersOf(state));
  });
});
