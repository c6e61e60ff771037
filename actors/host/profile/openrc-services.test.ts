import { parseRcStatus } from './openrc-services';
import { RC_STATUS } from './testing/machine-listings';

describe('OpenRC services', () => {
  test('lists every service once, enabled when it is in a runlevel', () => {
    expect(parseRcStatus(RC_STATUS)).toEqual([
      { name: 'chronyd', state: 'running', enabled: true },
      { name: 'crond', state: 'running', enabled: true },
      { name: 'devfs', state: 'running', enabled: true },
      { name: 'docker', state: 'running', enabled: false },
      { name: 'hwclock', state: 'running', enabled: true },
      { name: 'killprocs', state: 'stopped', enabled: true },
      { name: 'networking', state: 'running', enabled: true },
      { name: 'nginx', state: 'failed', enabled: true },
      { name: 'postgresql', state: 'stopped', enabled: false },
      { name: 'sshd', state: 'running', enabled: true },
      { name: 'sysfs', state: 'running', enabled: false },
    ]);
  });

  test('reads coloured output the same', () => {
    const coloured = 'Runlevel: \u001b[0;36mdefault\u001b[0m\n \u001b[0;32msshd\u001b[0m   [  \u001b[0;32mstarted\u001b[0m  ]\n';
    expect(parseRcStatus(coloured)).toEqual([{ name: 'sshd', state: 'running', enabled: true }]);
  });
});
