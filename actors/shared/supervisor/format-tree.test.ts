import { formatTree } from './format-tree';

describe('formatTree', () => {
  test('draws one actor a line with its state, its own state, and restarts and last error once it failed', () => {
    const text = formatTree({
      id: 'controller',
      state: 'supervising',
      restarts: 0,
      children: [
        { id: 'bus', state: 'running', restarts: 0, child_state: 'running', children: [] },
        { id: 'lease', state: 'running', restarts: 0, child_state: 'holding.waiting', children: [] },
        { id: 'reports', state: 'backingOff', restarts: 2, last_error: 'killed', children: [] },
        {
          id: 'workers',
          state: 'running',
          restarts: 0,
          child_state: 'supervising',
          children: [{ id: 'fetch', state: 'running', restarts: 1, child_state: 'running', last_error: 'timed out', children: [] }],
        },
      ],
    });
    expect(text).toBe([
      'controller  supervising',
      '├─ bus      running  running',
      '├─ lease    running  holding.waiting',
      '├─ reports  backingOff  2 restarts  last error: killed',
      '└─ workers  running  supervising',
      '   └─ fetch  running  running  1 restart  last error: timed out',
    ].join('\n'));
  });
});
