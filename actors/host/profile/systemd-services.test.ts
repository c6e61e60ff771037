import { parseSystemdServices } from './systemd-services';
import { UNIT_FILES, UNITS } from './testing/machine-listings';

describe('systemd services', () => {
  test('merges unit files and loaded units into names, states and enablement', () => {
    expect(parseSystemdServices(UNIT_FILES, UNITS)).toEqual([
      { name: 'apache2', state: 'stopped', enabled: false },
      { name: 'apparmor', state: 'running', enabled: true },
      { name: 'cron', state: 'running', enabled: true },
      { name: 'getty@tty1', state: 'running', enabled: true },
      { name: 'nginx', state: 'failed', enabled: true },
      { name: 'postgresql@15-main', state: 'running', enabled: true },
      { name: 'rescue', state: 'stopped', enabled: true },
      { name: 'ssh', state: 'unknown', enabled: true },
      { name: 'systemd-journald', state: 'running', enabled: true },
      { name: 'systemd-timesyncd', state: 'running', enabled: true },
      { name: 'unattended-upgrades', state: 'stopped', enabled: false },
    ]);
  });

  test('leaves out templates, aliases and units referenced without a file', () => {
    const names = parseSystemdServices(UNIT_FILES, UNITS).map((service) => service.name);
    expect(names).not.toContain('getty@');
    expect(names).not.toContain('dbus-org.freedesktop.timesync1');
    expect(names).not.toContain('plymouth-quit');
  });

  test('reads a failed unit marked with the C locale\'s circle', () => {
    expect(parseSystemdServices('', '* nginx.service loaded failed failed nginx\n')).toEqual([
      { name: 'nginx', state: 'failed', enabled: false },
    ]);
  });
});
