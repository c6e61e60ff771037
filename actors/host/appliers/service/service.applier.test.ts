import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ServiceResource } from '../../../../schema/resource';
import type { CommandRunner } from '../../../shared/process/command-runner';
import type { ApplyContext } from '../applier';
import { ApplyFailed } from '../applier';
import { HOST_UNIT_REFUSAL } from '../../../shared/host-unit/host-unit';
import { openrcBackend } from './openrc.backend';
import { serviceApplier } from './service.applier';
import { systemdBackend } from './systemd.backend';
import { FakeOpenRc } from './testing/fake-openrc';
import { FakeSystemd } from './testing/fake-systemd';

function contextFor(runner: CommandRunner, overrides: Partial<ApplyContext> = {}): ApplyContext {
  return { root: '/', stateDir: '/nonexistent/state', runner, hostUnit: 'nox-mesh-host.service', ...overrides };
}

function service(name: string, state: 'running' | 'stopped', enabled: boolean): ServiceResource {
  return { shape: 'service', name, state, enabled };
}

describe('service applier over systemd', () => {
  const applier = serviceApplier(systemdBackend());

  test('starts and enables a declared service with exactly the systemctl commands needed', async () => {
    const systemd = new FakeSystemd({ 'nginx.service': { running: false, state: 'disabled' } });
    const ctx = contextFor(systemd);
    const nginx = service('nginx', 'running', true);

    expect(await applier.observe(nginx, ctx)).toEqual({
      present: true,
      differences: ['not running, declared running', 'disabled, declared enabled'],
    });
    systemd.calls.length = 0;
    await applier.apply(nginx, ctx);

    expect(systemd.calls).toEqual([
      ['systemctl', 'is-enabled', 'nginx.service'],
      ['systemctl', 'is-active', 'nginx.service'],
      ['systemctl', 'enable', 'nginx.service'],
      ['systemctl', 'start', 'nginx.service'],
    ]);
    expect(await applier.observe(nginx, ctx)).toEqual({ present: true, differences: [] });
  });

  test('stops and disables a service declared stopped and disabled', async () => {
    const systemd = new FakeSystemd({ 'cups.service': { running: true, state: 'enabled' } });
    const ctx = contextFor(systemd);
    const cups = service('cups', 'stopped', false);

    expect((await applier.observe(cups, ctx)).differences).toEqual(['running, declared stopped', 'enabled, declared disabled']);
    await applier.apply(cups, ctx);

    expect(systemd.calls.slice(-2)).toEqual([
      ['systemctl', 'disable', 'cups.service'],
      ['systemctl', 'stop', 'cups.service'],
    ]);
    expect(systemd.unit('cups.service')).toEqual({ running: false, state: 'disabled' });
  });

  test('does nothing to a service that already matches', async () => {
    const systemd = new FakeSystemd({ 'sshd.service': { running: true, state: 'enabled' } });
    await applier.apply(service('sshd', 'running', true), contextFor(systemd));
    expect(systemd.calls.map((argv) => argv[1])).toEqual(['is-enabled', 'is-active']);
  });

  test('a service stopped by hand is drift: observe says so and apply starts it again', async () => {
    const systemd = new FakeSystemd({ 'nginx.service': { running: true, state: 'enabled' } });
    const ctx = contextFor(systemd);
    const nginx = service('nginx', 'running', true);
    systemd.stopByHand('nginx.service');

    expect((await applier.observe(nginx, ctx)).differences).toEqual(['not running, declared running']);
    await applier.apply(nginx, ctx);
    expect(systemd.calls.at(-1)).toEqual(['systemctl', 'start', 'nginx.service']);
    expect(systemd.unit('nginx.service')?.running).toBe(true);
  });

  test('reports a service the init does not know and refuses to apply it', async () => {
    const ctx = contextFor(new FakeSystemd());
    const missing = service('nosuch', 'running', true);
    expect(await applier.observe(missing, ctx)).toEqual({ present: false, differences: ['no such service'] });
    await expect(applier.apply(missing, ctx)).rejects.toThrow(/no such service "nosuch" in systemd/);
  });

  test('passes on what systemctl said when a start fails', async () => {
    const systemd = new FakeSystemd({ 'old.service': { running: false, state: 'masked' } });
    const old = service('old', 'running', false);
    expect((await applier.observe(old, contextFor(systemd))).differences).toEqual(['not running, declared running']);
    const failure = applier.apply(old, contextFor(systemd));
    await expect(failure).rejects.toBeInstanceOf(ApplyFailed);
    await expect(failure).rejects.toThrow('systemctl start old.service: exited 1: Failed to start old.service: Unit old.service is masked.');
  });

  test('says why a static unit cannot be declared disabled', async () => {
    const systemd = new FakeSystemd({ 'fsck.service': { running: false, state: 'static' } });
    expect((await applier.observe(service('fsck', 'stopped', false), contextFor(systemd))).differences).toEqual([
      'enabled (static), declared disabled',
    ]);
  });

  test('removal stops and disables the service and asks nothing else of systemd', async () => {
    const systemd = new FakeSystemd({ 'nginx.service': { running: true, state: 'enabled' } });
    expect(await applier.remove('service:nginx', contextFor(systemd))).toBe('stopped');
    expect(systemd.calls).toEqual([
      ['systemctl', 'is-enabled', 'nginx.service'],
      ['systemctl', 'is-active', 'nginx.service'],
      ['systemctl', 'stop', 'nginx.service'],
      ['systemctl', 'disable', 'nginx.service'],
    ]);
    // The unit is still there for a person to start again: removal is a stop, not a delete.
    expect(systemd.unit('nginx.service')).toEqual({ running: false, state: 'disabled' });
  });

  test('removal stops a static unit but leaves its enablement to the init', async () => {
    const systemd = new FakeSystemd({ 'helper.service': { running: true, state: 'static' } });
    expect(await applier.remove('service:helper', contextFor(systemd))).toBe('stopped');
    expect(systemd.calls.map((argv) => argv[1])).toEqual(['is-enabled', 'is-active', 'stop']);
  });

  test('removal of a service that is gone already is a stop with nothing to do', async () => {
    const systemd = new FakeSystemd();
    expect(await applier.remove('service:vanished', contextFor(systemd))).toBe('stopped');
    expect(systemd.calls).toEqual([['systemctl', 'is-enabled', 'vanished.service']]);
  });

  test('keeps a unit name that already says its type', async () => {
    const systemd = new FakeSystemd({ 'getty@tty1.service': { running: true, state: 'enabled' }, 'fstrim.timer': { running: false, state: 'disabled' } });
    await applier.apply(service('getty@tty1.service', 'running', true), contextFor(systemd));
    await applier.apply(service('fstrim.timer', 'running', true), contextFor(systemd));
    expect(systemd.calls.map((argv) => argv[2])).toEqual([
      'getty@tty1.service', 'getty@tty1.service', 'fstrim.timer', 'fstrim.timer', 'fstrim.timer', 'fstrim.timer',
    ]);
  });

  test('an init that cannot be asked makes the observation unreadable, not a difference', async () => {
    const systemd = new FakeSystemd({ 'nginx.service': { running: true, state: 'enabled' } });
    const observation = await applier.observe(service('nginx', 'running', true), contextFor(systemd, { root: '/srv/target' }));
    expect(observation.differences).toEqual([]);
    expect(observation.unreadable).toMatch(/systemd can tell whether a service is running only on the booted machine/);
  });
});

describe('service applier over OpenRC', () => {
  const applier = serviceApplier(openrcBackend());

  test('starts a service and adds it to the default runlevel with exactly the OpenRC commands needed', async () => {
    const openrc = new FakeOpenRc({ sshd: { running: false, runlevels: ['boot'] } });
    const ctx = contextFor(openrc);
    const sshd = service('sshd', 'running', true);

    expect((await applier.observe(sshd, ctx)).differences).toEqual(['not running, declared running', 'disabled, declared enabled']);
    openrc.calls.length = 0;
    await applier.apply(sshd, ctx);

    expect(openrc.calls).toEqual([
      ['rc-service', '--exists', 'sshd'],
      ['rc-service', 'sshd', 'status'],
      ['rc-update', 'show', 'default'],
      ['rc-update', 'add', 'sshd', 'default'],
      ['rc-service', 'sshd', 'start'],
    ]);
    expect(openrc.service('sshd')).toEqual({ running: true, runlevels: ['boot', 'default'] });
    expect(await applier.observe(sshd, ctx)).toEqual({ present: true, differences: [] });
  });

  test('a service stopped by hand is drift that apply undoes', async () => {
    const openrc = new FakeOpenRc({ crond: { running: true, runlevels: ['default'] } });
    const crond = service('crond', 'running', true);
    openrc.stopByHand('crond');
    expect((await applier.observe(crond, contextFor(openrc))).differences).toEqual(['not running, declared running']);
    await applier.apply(crond, contextFor(openrc));
    expect(openrc.calls.at(-1)).toEqual(['rc-service', 'crond', 'start']);
  });

  test('removal stops the service and takes it out of the runlevel, and nothing else', async () => {
    const openrc = new FakeOpenRc({ nginx: { running: true, runlevels: ['default'] } });
    expect(await applier.remove('service:nginx', contextFor(openrc))).toBe('stopped');
    expect(openrc.calls.slice(3)).toEqual([
      ['rc-service', 'nginx', 'stop'],
      ['rc-update', 'del', 'nginx', 'default'],
    ]);
    expect(openrc.service('nginx')).toEqual({ running: false, runlevels: [] });
  });

  test('a service OpenRC does not have is reported and not applied', async () => {
    const openrc = new FakeOpenRc();
    const ctx = contextFor(openrc);
    expect(await applier.observe(service('nosuch', 'running', true), ctx)).toEqual({ present: false, differences: ['no such service'] });
    await expect(applier.apply(service('nosuch', 'running', true), ctx)).rejects.toThrow(/no such service "nosuch" in OpenRC/);
  });
});

describe("refusing the host's own unit", () => {
  const applier = serviceApplier(systemdBackend());
  const own = ['nox-mesh-host', 'nox-mesh-host.service', 'nox-mesh-host-launch', 'nox-mesh-host-launch.service'];

  test.each(['nox-mesh-host', 'nox-mesh-host.service'])('refuses every spelling of the host and its launcher when the host unit is %s', (hostUnit) => {
    const ctx = contextFor(new FakeSystemd(), { hostUnit });
    for (const name of own) expect(applier.refuse?.(service(name, 'stopped', false), ctx)).toBe(HOST_UNIT_REFUSAL);
    expect(HOST_UNIT_REFUSAL).toBe(
      "a declaration may not manage the host's own unit: the installation owns the host; the host owns everything else",
    );
  });

  test('refuses a host unit installed under another name, and its launcher', () => {
    const ctx = contextFor(new FakeSystemd(), { hostUnit: 'mesh-edge.service' });
    expect(applier.refuse?.(service('mesh-edge', 'running', true), ctx)).toBe(HOST_UNIT_REFUSAL);
    expect(applier.refuse?.(service('mesh-edge-launch.service', 'running', true), ctx)).toBe(HOST_UNIT_REFUSAL);
  });

  test('takes services whose names merely resemble the host', () => {
    const ctx = contextFor(new FakeSystemd());
    for (const name of ['nginx', 'nox-mesh-hostd', 'nox-mesh-host-helper.service', 'nox-mesh-host.socket']) {
      expect(applier.refuse?.(service(name, 'running', true), ctx)).toBeUndefined();
    }
  });

  test('apply and removal refuse the host unit too, before asking the init anything', async () => {
    const systemd = new FakeSystemd({ 'nox-mesh-host.service': { running: true, state: 'enabled' } });
    const ctx = contextFor(systemd);
    await expect(applier.apply(service('nox-mesh-host', 'stopped', false), ctx)).rejects.toThrow(HOST_UNIT_REFUSAL);
    await expect(applier.remove('service:nox-mesh-host.service', ctx)).rejects.toThrow(HOST_UNIT_REFUSAL);
    await expect(applier.remove('service:nox-mesh-host-launch', ctx)).rejects.toThrow(HOST_UNIT_REFUSAL);
    expect(systemd.calls).toEqual([]);
    expect(systemd.unit('nox-mesh-host.service')).toEqual({ running: true, state: 'enabled' });
  });
});

describe('keeping the original state of a service', () => {
  const applier = serviceApplier(systemdBackend());
  let dir: string;
  beforeEach(async () => { dir = await fs.mkdtemp(path.join(os.tmpdir(), 'service-original-')); });
  afterEach(async () => { await fs.rm(dir, { recursive: true, force: true }); });

  test('records whether the service was running and enabled before the host changes it', async () => {
    const systemd = new FakeSystemd({ 'nginx.service': { running: true, state: 'disabled' } });
    const kept = await applier.keepOriginal(service('nginx', 'stopped', true), contextFor(systemd), path.join(dir, 'originals'));

    const file = path.join(dir, 'originals', 'service-nginx.json');
    expect(kept).toBe(file);
    expect(JSON.parse(await fs.readFile(file, 'utf8'))).toMatchObject({ service: 'nginx', manager: 'systemd', running: true, enabled: false });
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
  });

  test('keeps the first original and never overwrites it with what the host later set', async () => {
    const systemd = new FakeSystemd({ 'nginx.service': { running: false, state: 'disabled' } });
    const nginx = service('nginx', 'running', true);
    await applier.keepOriginal(nginx, contextFor(systemd), dir);
    await applier.apply(nginx, contextFor(systemd));
    const again = await applier.keepOriginal(nginx, contextFor(systemd), dir);

    expect(again).toBe(path.join(dir, 'service-nginx.json'));
    expect(JSON.parse(await fs.readFile(path.join(dir, 'service-nginx.json'), 'utf8'))).toMatchObject({ running: false, enabled: false });
  });

  test('keeps nothing for a service that does not exist', async () => {
    expect(await applier.keepOriginal(service('nosuch', 'running', true), contextFor(new FakeSystemd()), dir)).toBeUndefined();
    expect(await fs.readdir(dir)).toEqual([]);
  });
});
