import { namesHostUnit, namesHostUnitFile } from './host-unit';

// What a declaration may not name because the installation owns it: the host's unit, its
// launcher and its resume unit, in every spelling and every place the packages put their files.

describe('namesHostUnit', () => {
  test.each(['nox-mesh-host', 'nox-mesh-host.service', 'nox-mesh-host-launch', 'nox-mesh-host-resume', 'nox-mesh-host-resume.service', 'mesh-custom-resume'])('%s is the host\'s own', (name) => {
    expect(namesHostUnit(name, 'mesh-custom.service')).toBe(true);
  });

  test.each(['nginx', 'nox-mesh-host-resumer', 'resume', 'nox-mesh-host@1'])('%s is not', (name) => {
    expect(namesHostUnit(name, 'nox-mesh-host')).toBe(false);
  });
});

describe('namesHostUnitFile', () => {
  test.each([
    '/etc/systemd/system/nox-mesh-host.service',
    '/usr/lib/systemd/system/nox-mesh-host-resume.service',
    '/usr/lib/systemd/system/suspend.target.wants/nox-mesh-host-resume.service',
    '/etc/systemd/system/nox-mesh-host-launch.service.d/override.conf',
    '/etc/systemd/system/nox-mesh-host-resume.service.d',
    '/etc/init.d/nox-mesh-host',
    '/etc/conf.d/nox-mesh-host',
    '/lib/elogind/system-sleep/nox-mesh-host',
    '/usr/lib/elogind/system-sleep/nox-mesh-host-resume',
    '/usr/lib/nox-mesh-host',
    '/usr/lib/nox-mesh-host/nox-mesh-host-rouse',
  ])('%s belongs to the installation', (path) => {
    expect(namesHostUnitFile(path, 'nox-mesh-host')).toBe(true);
  });

  test.each([
    '/etc/systemd/system/nginx.service',
    '/etc/motd',
    '/etc/init.d/nox-mesh-host-notes/readme',
    '/usr/lib/nox-mesh-host-extras/tool',
    '/srv/nox-mesh-host.service.bak',
    '/lib/elogind/system-sleep/other-hook',
  ])('%s may be declared', (path) => {
    expect(namesHostUnitFile(path, 'nox-mesh-host')).toBe(false);
  });
});
