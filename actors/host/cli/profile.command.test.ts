import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Profile } from '../../../schema/profile';
import { parseContract } from '../../../schema/parse';
import { runVerb } from '../profile/testing/cli-harness';
import { machineRoots } from '../profile/testing/machine-tree';
import { ProfileCommand } from './profile.command';

// `nox-mesh-host profile` run in-process against machine roots written by the test.

const roots = machineRoots('profile-command');
afterAll(() => roots.cleanup());

const alpine = {
  'etc/os-release': 'ID=alpine\nVERSION_ID=3.20.3\nPRETTY_NAME="Alpine Linux v3.20"\n',
  'etc/hostname': 'hub\n',
  'lib/apk/db/installed': 'P:musl\nV:1.2.5-r0\n\n',
  'sbin/openrc': { text: '\x7fELF', mode: 0o755 },
};

describe('nox-mesh-host profile', () => {
  test('prints the profile of the machine under --root as an aligned table', async () => {
    const root = await roots.make(alpine);
    const { code, stdout, stderr } = await runVerb([ProfileCommand], ['profile', '--root', root]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('os                 Alpine Linux v3.20 (alpine 3.20.3)');
    expect(lines).toContain('init               openrc');
    expect(lines).toContain('package manager    apk');
    expect(lines).toContain('container runtime  none');
    expect(lines).toContain('graphical session  no');
    expect(lines).toContain('host kind          resident');
    expect(lines).toContain('hostname           hub');
    // Every value starts in the same column.
    expect(new Set(lines.map((line) => line.search(/ {2}\S/) + 2))).toEqual(new Set([19]));
  });

  test('prints the profile contract alone under --json', async () => {
    const root = await roots.make(alpine);
    const { code, stdout } = await runVerb([ProfileCommand], ['profile', '--root', root, '--json']);
    expect(code).toBe(0);
    const profile = parseContract(Profile, JSON.parse(stdout), 'profile');
    expect(profile).toMatchObject({ os: { id: 'alpine', version_id: '3.20.3' }, init: 'openrc', package_manager: 'apk', hostname: 'hub' });
  });

  test('refuses a --root that does not exist, naming it and what to give instead', async () => {
    const missing = join(await roots.make(), 'mnt', 'target');
    const { code, stdout, stderr } = await runVerb([ProfileCommand], ['profile', '--root', missing]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      `error: the root directory does not exist: ${JSON.stringify(missing)}\n` +
        'next:  give --root the directory where the machine is mounted (e.g. --root /mnt/target), or leave --root out to read this machine\n',
    );
  });

  test('refuses a --root that is a file, as JSON under --json', async () => {
    const root = await roots.make({ 'disk.img': 'not mounted' });
    const { code, stdout } = await runVerb([ProfileCommand], ['profile', '--root', join(root, 'disk.img'), '--json']);
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toEqual({
      error: {
        condition: 'RootNotADirectory',
        what: 'the root is not a directory',
        value: join(root, 'disk.img'),
        next: expect.stringMatching(/^mount the image or disk first/),
        retryable: false,
      },
    });
  });

  test('refuses a --root that cannot be looked at, saying why', async () => {
    const loop = join(await roots.make(), 'loop');
    await symlink('loop', loop);
    const { code, stderr } = await runVerb([ProfileCommand], ['profile', '--root', loop]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^error: the root directory cannot be read \(ELOOP\): ".*\/loop"\nnext: {2}check the path/);
  });

  test('describes each option under --help', async () => {
    const { code, stdout } = await runVerb([ProfileCommand], ['profile', '--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/Print what this machine can do/);
    expect(stdout).toMatch(/--root .*Treat this directory as the machine/);
    expect(stdout).toMatch(/--json .*Print one JSON document instead of text/);
  });
});
