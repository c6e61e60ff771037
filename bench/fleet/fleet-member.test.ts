import { inBatches } from './fleet-member';

describe('inBatches', () => {
  test('never has more than the width at once, and returns results in the items\' order', async () => {
    let running = 0;
    let most = 0;
    const results = await inBatches([30, 5, 20, 1, 10, 2], 2, async (delay, index) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, delay));
      running -= 1;
      return `${index}:${delay}`;
    });
    expect(most).toBe(2);
    expect(results).toEqual(['0:30', '1:5', '2:20', '3:1', '4:10', '5:2']);
  });

  test('a failure reaches the caller', async () => {
    await expect(inBatches([1, 2], 4, async (item) => {
      if (item === 2) throw new Error('node 2 could not connect');
      return item;
    })).rejects.toThrow('node 2 could not connect');
  });
});
