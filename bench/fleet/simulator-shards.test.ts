import { hostsPerShard } from './simulator-shards';

const limits = (soft: string, hard: string): string => [
  'Limit                     Soft Limit           Hard Limit           Units     ',
  'Max processes             95316                95316                processes ',
  `Max open files            ${soft.padEnd(20)} ${hard.padEnd(20)} files     `,
  'Max locked memory         8388608              8388608              bytes     ',
].join('\n');

describe('how many simulated hosts one shard runs', () => {
  test('stays under the open-file limit a shard inherits: 5,000 at 20,000 did not', () => {
    expect(hostsPerShard(limits('20000', '20000'))).toBe(3948);
    expect(hostsPerShard(limits('20000', '20000')) * 5).toBeLessThan(20_000);
  });

  test('reads the soft limit, the one a process meets', () => {
    expect(hostsPerShard(limits('1024', '524288'))).toBe(153);
  });

  test('without a readable limit, assumes the common default of 1,024', () => {
    expect(hostsPerShard('')).toBe(153);
    expect(hostsPerShard(limits('unlimited', 'unlimited'))).toBeGreaterThan(100_000);
  });
});
