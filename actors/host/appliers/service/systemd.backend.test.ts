import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ProcessRunner } from '../../../shared/process/command-runner';
import type { ApplyContext } from '../applier';
import { systemdBackend, systemdUnitName } from './systemd.backend';

// The real systemctl, offline: `--root` enables and disables by writing links in a folder, the
// one part of systemd that needs no booted init. Running state is covered through FakeSystemd.
describe('systemd backend against the real systemctl in an offline root', () => {
  const backend = systemdBackend();
  let root: string;
  let ctx: ApplyContext;
  const unitFile = (): string => path.join(root, 'etc/systemd/system/demo.service');
  const wantsLink = (): string => path.join(root, 'etc/systemd/system/multi-user.target.wants/demo.service');

  beforeEach(async () => {
    root = await fs.mkdtemp(path.join(os.tmpdir(), 'systemd-root-'));
    await fs.mkdir(path.dirname(unitFile()), { recursive: true });
    await fs.writeFile(unitFile(), '[Service]\nExecStart=/bin/sleep 300\n\n[Install]\nWantedBy=multi-user.target\n');
    ctx = { root, stateDir: path.join(root, 'var/lib/mesh-host'), runner: new ProcessRunner(), hostUnit: 'nox-mesh-host.service' };
  });
  afterEach(async () => { await fs.rm(root, { recursive: true, force: true }); });

  test('enabling links the unit into its target and disabling removes the link, never the unit', async () => {
    await backend.enable('demo', ctx);
    expect(await fs.readlink(wantsLink())).toBe('/etc/systemd/system/demo.service');

    await backend.disable('demo', ctx);
    await expect(fs.lstat(wantsLink())).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await fs.readFile(unitFile(), 'utf8')).toContain('ExecStart=/bin/sleep 300');
  });

  test('a unit with no file in the root does not exist', async () => {
    expect(await backend.status('nosuch', ctx)).toEqual({ exists: false, running: false, enabled: false });
  });

  test('enabling a unit the root does not have fails with what systemctl said', async () => {
    await expect(backend.enable('nosuch', ctx)).rejects.toThrow(/systemctl --root=.* enable nosuch\.service: exited 1: .*nosuch\.service does not exist/);
  });

  test('refuses to ask the booted systemd whether a unit in another root is running', async () => {
    await expect(backend.status('demo', ctx)).rejects.toThrow(`systemd can tell whether a service is running only on the booted machine (root "/"), not in the root "${root}"`);
    await expect(backend.start('demo', ctx)).rejects.toThrow(/systemd can start a service only on the booted machine/);
  });
});

describe('systemd unit names', () => {
  test('a bare name is a service, and a name with a unit type is kept', () => {
    expect(systemdUnitName('nginx')).toBe('nginx.service');
    expect(systemdUnitName('php8.2-fpm')).toBe('php8.2-fpm.service');
    expect(systemdUnitName('getty@tty1.service')).toBe('getty@tty1.service');
    expect(systemdUnitName('fstrim.timer')).toBe('fstrim.timer');
  });
});
