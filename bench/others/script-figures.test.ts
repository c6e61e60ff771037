import { scriptFigures } from './script-figures';

describe('scriptFigures', () => {
  test('reads the per-run lines of the failover script, one figure per kind, in order of appearance', () => {
    const stdout = [
      'run  1  kill -9           15234 ms',
      'run  2  kill -9           15010 ms',
      'run  3  graceful stop        41 ms',
      '',
      'failover until the standby serves (lease 15 s, renewed every 5 s, standby tries every 1 s), 2 runs each:',
      'after              min   median      max',
      'kill -9        15010 ms 15122 ms 15234 ms',
    ].join('\n');
    expect(scriptFigures(stdout, 'controller', 'controller.failover')).toEqual([
      { head: { id: 'controller.failover.kill_9', group: 'controller', label: 'kill -9', unit: 'ms' }, values: [15234, 15010] },
      { head: { id: 'controller.failover.graceful_stop', group: 'controller', label: 'graceful stop', unit: 'ms' }, values: [41] },
    ]);
  });

  test('prefers the JSON line when a script prints one, and skips figures without values', () => {
    const stdout = [
      'run  1  rouse  40 ms',
      '{"bench_figures": [{"id": "rouse_to_relinked", "label": "rouse to relinked", "values": [12.5, 14]}, {"id": "empty", "label": "nothing", "values": []}]}',
    ].join('\n');
    expect(scriptFigures(stdout, 'link', 'link')).toEqual([
      { head: { id: 'link.rouse_to_relinked', group: 'link', label: 'rouse to relinked', unit: 'ms' }, values: [12.5, 14] },
    ]);
  });

  test('finds nothing in output that has neither form', () => {
    expect(scriptFigures('all good\n', 'link', 'link')).toEqual([]);
  });
});
