import { createServer, type Server } from 'node:net';
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Profile } from '../../../schema/profile';
import { parseContract } from '../../../schema/parse';
import { detectProfile, type HostEnvironment } from './detect-profile';
import { machineRoots, type MachineTree } from './testing/machine-tree';

// Each machine is a real directory tree written by the test; the kernel, architecture and
// fallback host name are pinned, so the profile is the same on any machine that runs it.

const roots = machineRoots('detect-profile');
const env: HostEnvironment = { arch: 'x64', kernel: '6.1.0-18-amd64', hostname: 'build-box' };
const executable = (text = '#!/bin/sh\n') => ({ text, mode: 0o755 });

afterAll(() => roots.cleanup());

async function profileOf(tree: MachineTree, overrides: Partial<HostEnvironment> = {}): Promise<Profile> {
  const root = await roots.make(tree);
  // Every profile the host can produce must be one the controller accepts.
  return parseContract(Profile, await detectProfile({ root, env: { ...env, ...overrides } }), 'profile');
}

const DEBIAN_OS_RELEASE = [
  'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"',
  'NAME="Debian GNU/Linux"',
  'VERSION_ID="12"',
  'VERSION="12 (bookworm)"',
  'VERSION_CODENAME=bookworm',
  'ID=debian',
  'HOME_URL="https://www.debian.org/"',
  '',
].join('\n');

const debian: MachineTree = {
  'etc/os-release': DEBIAN_OS_RELEASE,
  'etc/hostname': 'web-1\n',
  'var/lib/dpkg/status': 'Package: base-files\nStatus: install ok installed\nVersion: 12.4+deb12u5\n',
  'run/systemd/system': null,
  'usr/bin/docker': executable('\x7fELF'),
};

describe('the profile of a machine', () => {
  test('describes a Debian server with systemd booted, apt and docker', async () => {
    expect(await profileOf(debian)).toEqual({
      os: { id: 'debian', version_id: '12', pretty_name: 'Debian GNU/Linux 12 (bookworm)' },
      arch: 'x86_64',
      kernel: '6.1.0-18-amd64',
      init: 'systemd',
      package_manager: 'apt',
      container_runtime: 'docker',
      graphical_session: false,
      wireguard: 'none',
      host_kind: 'resident',
      hostname: 'web-1',
    });
  });

  test('names apt on a Debian that also carries pacman as a tool, as Debian packages it', async () => {
    // pacman-package-manager installs /usr/bin/pacman and an empty /var/lib/pacman on Debian;
    // the package database is what says who manages the machine.
    const withPacman: MachineTree = { ...debian, 'usr/bin/pacman': executable(), 'var/lib/pacman': null };
    expect((await profileOf(withPacman)).package_manager).toBe('apt');
    // Without os-release to break a tie, it is the database alone that decides.
    const { 'etc/os-release': _osRelease, ...unnamed } = withPacman;
    expect((await profileOf(unnamed)).package_manager).toBe('apt');
  });

  test('describes an Alpine machine with OpenRC installed, apk and no host name file', async () => {
    const profile = await profileOf({
      'etc/os-release': 'NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.20.3\nPRETTY_NAME="Alpine Linux v3.20"\n',
      'lib/apk/db/installed': 'P:musl\nV:1.2.5-r0\n\n',
      'sbin/apk': executable(),
      'sbin/openrc': executable(),
    }, { arch: 'arm64' });
    expect(profile).toEqual({
      os: { id: 'alpine', version_id: '3.20.3', pretty_name: 'Alpine Linux v3.20' },
      arch: 'aarch64',
      kernel: '6.1.0-18-amd64',
      init: 'openrc',
      package_manager: 'apk',
      container_runtime: 'none',
      graphical_session: false,
      wireguard: 'none',
      host_kind: 'resident',
      hostname: 'build-box',
    });
  });

  test('takes OpenRC from its run directory once booted, even without the binary under /sbin', async () => {
    expect((await profileOf({ 'run/openrc': null })).init).toBe('openrc');
  });

  test('describes an Arch laptop: pacman, podman, systemd, no version as a rolling release has none', async () => {
    const profile = await profileOf({
      'usr/lib/os-release': 'NAME="Arch Linux"\nPRETTY_NAME="Arch Linux"\nID=arch\nBUILD_ID=rolling\n',
      'var/lib/pacman/local/ALPM_DB_VERSION': '9\n',
      'var/lib/pacman/local/linux-6.11.5.arch1-1/desc': '%NAME%\nlinux\n\n%VERSION%\n6.11.5.arch1-1\n\n',
      // Arch packages dpkg too; a machine that installed it has a status file it does not live by.
      'var/lib/dpkg/status': '',
      'run/systemd/system': null,
      'usr/bin/podman': executable(),
      'etc/hostname': '# set by the installer\nlaptop\n',
    });
    expect(profile).toMatchObject({
      os: { id: 'arch', pretty_name: 'Arch Linux' },
      init: 'systemd',
      package_manager: 'pacman',
      container_runtime: 'podman',
      hostname: 'laptop',
    });
    expect(profile.os.version_id).toBeUndefined();
  });

  test('says unknown and none for an empty root, and is still a valid profile', async () => {
    expect(await profileOf({})).toEqual({
      os: { id: 'unknown' },
      arch: 'x86_64',
      kernel: '6.1.0-18-amd64',
      init: 'none',
      package_manager: 'none',
      container_runtime: 'none',
      graphical_session: false,
      wireguard: 'none',
      host_kind: 'resident',
      hostname: 'build-box',
    });
  });

  test('calls an Android phone an episodic host and reads its release from build.prop', async () => {
    const profile = await profileOf({
      'system/build.prop': '# begin build properties\nro.build.version.release=14\nro.product.cpu.abi=arm64-v8a\n',
    }, { arch: 'arm64', hostname: 'localhost' });
    expect(profile).toMatchObject({
      os: { id: 'android', version_id: '14', pretty_name: 'Android 14' },
      arch: 'aarch64',
      init: 'none',
      package_manager: 'none',
      host_kind: 'episodic',
      hostname: 'localhost',
    });
  });

  test('says the init is unknown when its run directory cannot be looked at', async () => {
    const root = await roots.make({ run: null });
    // A link to itself fails every look with ELOOP, which is neither "there" nor "absent".
    await symlink('systemd', join(root, 'run/systemd'));
    const profile = await detectProfile({ root, env });
    expect(profile.init).toBe('unknown');
  });

  test('prefers the machine its os-release names when two package databases exist and the order would say otherwise', async () => {
    const profile = await profileOf({
      'etc/os-release': 'ID=ubuntu\nID_LIKE=debian\n',
      'var/lib/dpkg/status': '',
      'lib/apk/db': null,
    });
    expect(profile.package_manager).toBe('apt');
  });

  test('falls back to the program when no package database exists', async () => {
    expect((await profileOf({ 'usr/bin/pacman': executable() })).package_manager).toBe('pacman');
  });

  test('does not count a container engine file that is not executable', async () => {
    expect((await profileOf({ 'usr/local/bin/docker': 'not a program' })).container_runtime).toBe('none');
    expect((await profileOf({ 'usr/local/bin/docker': executable() })).container_runtime).toBe('docker');
  });

  test('calls podman what podman-docker installs as docker', async () => {
    const profile = await profileOf({
      'usr/bin/docker': executable('#!/bin/sh\n[ -e /etc/containers/nodocker ] || echo "Emulate Docker CLI using podman."\nexec /usr/bin/podman "$@"\n'),
      'usr/bin/podman': executable('\x7fELF'),
    });
    expect(profile.container_runtime).toBe('podman');
  });

  test('falls back to the kernel host name when /etc/hostname holds one the contract cannot carry', async () => {
    expect((await profileOf({ 'etc/hostname': '(none)\n' })).hostname).toBe('build-box');
    expect((await profileOf({ 'etc/hostname': '(none)\n' }, { hostname: '' })).hostname).toBe('localhost');
  });

  test('says unknown for an os-release ID the contract cannot carry, keeping the rest', async () => {
    const profile = await profileOf({ 'etc/os-release': "ID='Custom Linux'\nPRETTY_NAME='Custom \"Linux\"'\n" });
    expect(profile.os).toEqual({ id: 'unknown', pretty_name: 'Custom "Linux"' });
  });
});

describe('the graphical session in a profile', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((server) => new Promise((done) => server.close(done))));
  });

  async function listenAt(path: string): Promise<void> {
    const server = createServer();
    servers.push(server);
    await mkdir(join(path, '..'), { recursive: true });
    await new Promise<void>((done) => server.listen(path, done));
  }

  test('is there when an X server has its socket in /tmp/.X11-unix', async () => {
    const root = await roots.make();
    await listenAt(join(root, 'tmp/.X11-unix/X0'));
    expect((await detectProfile({ root, env })).graphical_session).toBe(true);
  });

  test('is there when a Wayland compositor has its socket in a user runtime directory', async () => {
    const root = await roots.make({ 'run/user/1000/wayland-0.lock': '' });
    await listenAt(join(root, 'run/user/1000/wayland-0'));
    expect((await detectProfile({ root, env })).graphical_session).toBe(true);
  });

  test('is not there for files that only look like display sockets', async () => {
    const root = await roots.make({ 'tmp/.X11-unix/X0': '', 'run/user/1000/wayland-0.lock': '', 'run/user/1000/wayland-1': '' });
    expect((await detectProfile({ root, env })).graphical_session).toBe(false);
  });

  test('is there when a display manager is enabled, before anyone has logged in', async () => {
    const root = await roots.make({ 'etc/systemd/system': null });
    await symlink('/usr/lib/systemd/system/gdm3.service', join(root, 'etc/systemd/system/display-manager.service'));
    expect((await detectProfile({ root, env })).graphical_session).toBe(true);
  });
});

describe('where WireGuard comes from', () => {
  test('says kernel when the module is loaded', async () => {
    expect((await profileOf({ ...debian, 'sys/module/wireguard': null })).wireguard).toBe('kernel');
  });

  test('says kernel when the module is installed or built in for the running kernel, not for another', async () => {
    const dep = 'kernel/drivers/net/wireguard/wireguard.ko.xz: kernel/net/ipv4/udp_tunnel.ko.xz\n';
    expect((await profileOf({ ...debian, 'lib/modules/6.1.0-18-amd64/modules.dep': dep })).wireguard).toBe('kernel');
    expect((await profileOf({ ...debian, 'lib/modules/6.1.0-18-amd64/modules.builtin': 'kernel/drivers/net/wireguard/wireguard.ko\n' })).wireguard).toBe('kernel');
    expect((await profileOf({ ...debian, 'lib/modules/5.10.0-9-amd64/modules.dep': dep })).wireguard).toBe('none');
  });

  test('says wireguard-go when the kernel has none and the userspace program is installed', async () => {
    expect((await profileOf({ ...debian, 'usr/bin/wireguard-go': executable('\x7fELF') })).wireguard).toBe('wireguard-go');
    expect((await profileOf({ ...debian, 'usr/bin/wireguard-go': '\x7fELF, not executable' })).wireguard).toBe('none');
  });

  test('prefers the kernel when both are there', async () => {
    expect((await profileOf({ ...debian, 'sys/module/wireguard': null, 'usr/bin/wireguard-go': executable('\x7fELF') })).wireguard).toBe('kernel');
  });
});
