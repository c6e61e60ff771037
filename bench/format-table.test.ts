import type { BenchResults } from './bench-results';
import { failed, floorOf, measured, notMeasured } from './figure';
import { formatTable, formatValue } from './format-table';

const machine = { cores: 2, cpu_model: 'test cpu', memory_gb: 24, node: 'v20', nats_server: 'nats-server: v2.9.10', os: 'Debian' };

function results(figures: BenchResults['figures']): BenchResults {
  return { format: 1, mode: 'quick', started_at: '2026-12-01T00:00:00.000Z', duration_s: 95, machine, figures };
}

describe('formatTable', () => {
  test('a missed goal reads "no" and a met one "yes", with the floor and the ratio beside the figure', () => {
    const floor = floorOf('request/reply', [1, 1, 1]);
    const table = formatTable(results([
      measured({ id: 'a', group: 'fleet', label: 'push at 1,000', unit: 'ms' }, [900, 1500], { goal: { text: '≤ 1 s', max: 1000, on: 'p99' }, floor }),
      measured({ id: 'b', group: 'fleet', label: 'push at 1', unit: 'ms' }, [10, 12], { goal: { text: '≤ 1 s', max: 1000, on: 'p99' } }),
    ]));
    expect(table).toContain('| push at 1,000 | 1200 ms | 1500 ms | 2 | p99 ≤ 1 s | no | 1.0 ms (request/reply) | 1200× |');
    expect(table).toContain('| push at 1 | 11.0 ms | 12.0 ms | 2 | p99 ≤ 1 s | yes |');
    expect(table).toContain('| **fleet** |');
    expect(table).toContain('quick run of 2026-12-01T00:00:00.000Z, 95 s');
  });

  test('a floor is printed in the unit of the figure it is set beside', () => {
    const table = formatTable(results([
      measured({ id: 'm', group: 'host', label: 'idle RSS', unit: 'MB' }, [54, 55], { floor: floorOf('node alone', [45, 45]) }),
    ]));
    expect(table).toContain('| idle RSS | 54.5 MB | 55.0 MB | 2 |  |  | 45.0 MB (node alone) | 1.21× |');
  });

  test('a figure without numbers says why instead of printing empty cells', () => {
    const table = formatTable(results([
      notMeasured({ id: 'c', group: 'link', label: 'rouse', unit: 'ms' }, 'not measured yet: arrives with the link issue'),
      failed({ id: 'd', group: 'peers', label: 'puppet | apply', unit: 'ms' }, new Error('exited 1\nsecond line')),
    ]));
    expect(table).toContain('| rouse | not measured |');
    expect(table).toContain('not measured yet: arrives with the link issue');
    expect(table).toContain('| puppet \\| apply | failed |');
    expect(table).toContain('exited 1 / second line');
  });

  test('values carry their unit, seconds once past ten thousand milliseconds', () => {
    expect(formatValue(12_345, 'ms')).toBe('12.3 s');
    expect(formatValue(47.25, 'MB')).toBe('47.3 MB');
    expect(formatValue(2.44, '%')).toBe('2.4 %');
    expect(formatValue(3, 'count')).toBe('3');
  });
});
