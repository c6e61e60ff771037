import { Inventory } from '../../../schema/inventory';
import { parseContract } from '../../../schema/parse';
import { runVerb } from '../profile/testing/cli-harness';
import { machineRoots } from '../profile/testing/machine-tree';
import { DPKG_STATUS } from '../profile/testing/machine-listings';
import { ScriptedRunner } from '../profile/testing/scripted-runner';
import { InventoryCommand } from './inventory.command';

// `nox-mesh-host inventory` run in-process against a Debian-like root written by the test. The
// root has systemd's run directory and docker, so the verb has services and containers it
// must not ask the real machine about: a scripted runner records that nothing was run.

const roots = machineRoots('inventory-command');
afterAll(() => roots.cleanup());

const debian = {
  'etc/os-release': 'ID=debian\nVERSION_ID=12\n',
  'var/lib/dpkg/status': DPKG_STATUS,
  'run/systemd/system': null,
  'usr/bin/docker': { text: '\x7fELF', mode: 0o755 },
};

describe('nox-mesh-host inventory', () => {
  test('prints the packages as an aligned table and says why services and containers are not listed', async () => {
    const root = await roots.make(debian);
    const runner = new ScriptedRunner();
    const { code, stdout, stderr } = await runVerb([InventoryCommand], ['inventory', '--root', root], runner);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(runner.calls).toEqual([]);
    const text = stdout.replace(/collected at \S+/, 'collected at TIME');
    expect(text).toBe(
      [
        'packages (5)',
        '  NAME            VERSION',
        '  base-files      12.4+deb12u5',
        '  libc6:amd64     2.36-9+deb12u7',
        '  libc6:i386      2.36-9+deb12u7',
        '  man-db          2.11.2-2',
        '  openssh-server  1:9.2p1-2+deb12u3',
        '',
        'services (0)',
        `  not listed: systemd answers for the booted machine only, not for the root ${root}; run without --root to list services`,
        '',
        'containers (0)',
        `  not listed: docker answers for the booted machine only, not for the root ${root}; run without --root to list containers`,
        '',
        'collected at TIME',
        '',
      ].join('\n'),
    );
  });

  test('prints the inventory contract alone on stdout under --json, and what is missing on stderr', async () => {
    const root = await roots.make(debian);
    const { code, stdout, stderr } = await runVerb([InventoryCommand], ['inventory', '--root', root, '--json'], new ScriptedRunner());
    expect(code).toBe(0);
    const inventory = parseContract(Inventory, JSON.parse(stdout), 'inventory');
    expect(inventory.packages.map((pkg) => pkg.name)).toEqual(['base-files', 'libc6:amd64', 'libc6:i386', 'man-db', 'openssh-server']);
    expect(inventory.services).toEqual([]);
    expect(stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^warning: services not listed: systemd answers for the booted machine only/),
      expect.stringMatching(/^warning: containers not listed: docker answers for the booted machine only/),
    ]);
  });

  test('says none for sections a bare machine simply does not have', async () => {
    const root = await roots.make({ 'etc/os-release': 'ID=debian\n', 'var/lib/dpkg/status': '' });
    const { code, stdout } = await runVerb([InventoryCommand], ['inventory', '--root', root], new ScriptedRunner());
    expect(code).toBe(0);
    expect(stdout).toMatch(/^packages \(0\)\n {2}none\n\nservices \(0\)\n {2}none\n\ncontainers \(0\)\n {2}none\n\ncollected at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/);
  });

  test('refuses a --root that does not exist', async () => {
    const { code, stderr } = await runVerb([InventoryCommand], ['inventory', '--root', '/nonexistent/mesh-root']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: the root directory does not exist: "\/nonexistent\/mesh-root"\nnext: {2}give --root/);
  });

  test('describes each option under --help', async () => {
    const { code, stdout } = await runVerb([InventoryCommand], ['inventory', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/--root .*Treat this directory as the machine/);
    expect(stdout).toMatch(/--json .*Print one JSON document instead of text/);
  });
});
