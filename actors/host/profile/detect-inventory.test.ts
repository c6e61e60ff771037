import type { NetworkInterfaceInfo } from 'node:os';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Inventory } from '../../../schema/inventory';
import { parseContract } from '../../../schema/parse';
import type { Profile } from '../../../schema/profile';
import { collectInventory, type CollectedInventory, type InventoryOptions } from './detect-inventory';
import { buildDeb } from '../appliers/package/testing/build-deb';
import { buildPacmanPackage } from '../appliers/package/testing/build-pacman-package';
import { makeDpkgRoot } from '../appliers/package/testing/dpkg-root';
import { makePacmanRoot } from '../appliers/package/testing/pacman-root';
import { runTool } from '../appliers/package/testing/run-tool';
import { machineRoots } from './testing/machine-tree';
import { APK_INSTALLED, DOCKER_PS, DPKG_STATUS, PODMAN_PS, RC_STATUS, UNIT_FILES, UNITS, pacmanDesc } from './testing/machine-listings';
import { ScriptedRunner } from './testing/scripted-runner';

// Package databases are real files under temporary roots. Services and containers come from a
// booted init and a container engine, which cannot run here: a scripted fake answers the exact
// commands, on root "/" (the only root they answer for) with no package manager, so the real
// machine's own database is never read.

const roots = machineRoots('detect-inventory');
afterAll(() => roots.cleanup());

type Managers = Pick<Profile, 'package_manager' | 'init' | 'container_runtime'>;
const nothing: Managers = { package_manager: 'none', init: 'none', container_runtime: 'none' };

async function collect(options: Partial<InventoryOptions> & { profile: Managers }): Promise<CollectedInventory> {
  const collected = await collectInventory({ runner: new ScriptedRunner(), now: () => new Date('2026-08-27T14:02:00.345Z'), interfaces: {}, ...options });
  // Whatever the machine, what the host sends must be a valid inventory.
  parseContract(Inventory, collected.inventory, 'inventory');
  return collected;
}

describe('the packages in an inventory', () => {
  test('lists what the dpkg status file holds as installed, sorted, without a package removed to its configuration', async () => {
    const root = await roots.make({ 'var/lib/dpkg/status': DPKG_STATUS });
    const { inventory, gaps } = await collect({ root, profile: { ...nothing, package_manager: 'apt' } });
    expect(inventory.packages).toEqual([
      { name: 'base-files', version: '12.4+deb12u5' },
      { name: 'libc6:amd64', version: '2.36-9+deb12u7' },
      { name: 'libc6:i386', version: '2.36-9+deb12u7' },
      { name: 'man-db', version: '2.11.2-2' },
      { name: 'openssh-server', version: '1:9.2p1-2+deb12u3' },
    ]);
    expect(gaps).toEqual([]);
    expect(inventory.truncated).toBeUndefined();
  });

  test('lists what apk\'s installed database holds', async () => {
    const root = await roots.make({ 'lib/apk/db/installed': APK_INSTALLED });
    const { inventory } = await collect({ root, profile: { ...nothing, package_manager: 'apk' } });
    expect(inventory.packages).toEqual([
      { name: 'busybox', version: '1.36.1-r29' },
      { name: 'musl', version: '1.2.5-r0' },
      { name: 'openrc', version: '0.54-r1' },
    ]);
  });

  test('lists pacman\'s local database, and says which entries it could not read', async () => {
    const root = await roots.make({
      'var/lib/pacman/local/ALPM_DB_VERSION': '9\n',
      'var/lib/pacman/local/linux-6.11.5.arch1-1/desc': pacmanDesc('linux', '6.11.5.arch1-1'),
      'var/lib/pacman/local/glibc-2.40+r16+gaa533d58ff-2/desc': pacmanDesc('glibc', '2.40+r16+gaa533d58ff-2'),
      'var/lib/pacman/local/broken-1-1': null,
    });
    const { inventory, gaps } = await collect({ root, profile: { ...nothing, package_manager: 'pacman' } });
    expect(inventory.packages).toEqual([
      { name: 'glibc', version: '2.40+r16+gaa533d58ff-2' },
      { name: 'linux', version: '6.11.5.arch1-1' },
    ]);
    expect(gaps).toEqual([{ section: 'packages', reason: expect.stringMatching(/1 entries of .*local have no readable desc .*: broken-1-1$/) }]);
  });

  test('stops at the bound, keeping the first names, and says it was truncated', async () => {
    const root = await roots.make({ 'lib/apk/db/installed': APK_INSTALLED });
    const { inventory } = await collect({ root, profile: { ...nothing, package_manager: 'apk' }, limit: 2 });
    expect(inventory.packages.map((pkg) => pkg.name)).toEqual(['busybox', 'musl']);
    expect(inventory.truncated).toBe(true);
  });

  test('leaves the packages empty and says why when the database the profile names is not there', async () => {
    const root = await roots.make();
    const { inventory, gaps } = await collect({ root, profile: { ...nothing, package_manager: 'apt' } });
    expect(inventory.packages).toEqual([]);
    expect(gaps).toEqual([{ section: 'packages', reason: expect.stringMatching(/dpkg database .*var\/lib\/dpkg\/status could not be read: it does not exist/) }]);
  });

  test('leaves the packages empty and says why when the database cannot be read', async () => {
    const root = await roots.make({ 'var/lib/dpkg': null });
    await symlink('status', join(root, 'var/lib/dpkg/status'));
    const { inventory, gaps } = await collect({ root, profile: { ...nothing, package_manager: 'apt' } });
    expect(inventory.packages).toEqual([]);
    expect(gaps[0]?.reason).toMatch(/ELOOP/);
  });

  test('carries the collection time in whole seconds', async () => {
    const { inventory } = await collect({ root: await roots.make(), profile: nothing });
    expect(inventory).toEqual({ packages: [], services: [], containers: [], addresses: [], collected_at: '2026-08-27T14:02:00Z' });
  });
});

describe('the addresses in an inventory', () => {
  const info = (address: string, family: 'IPv4' | 'IPv6', internal = false) =>
    ({ address, family, internal, netmask: '', mac: '00:00:00:00:00:00', cidr: null, ...(family === 'IPv6' ? { scopeid: 0 } : {}) }) as NetworkInterfaceInfo;

  test('lists every address peers could use, by interface, without loopback or link-local ones', async () => {
    const { inventory } = await collect({
      root: await roots.make(),
      profile: nothing,
      interfaces: {
        lo: [info('127.0.0.1', 'IPv4', true), info('::1', 'IPv6', true)],
        eth0: [info('192.0.2.7', 'IPv4'), info('fe80::1', 'IPv6'), info('2001:db8::7', 'IPv6')],
        wlan0: [info('169.254.3.4', 'IPv4'), info('10.1.2.3', 'IPv4')],
      },
    });
    expect(inventory.addresses).toEqual([
      { interface: 'eth0', address: '192.0.2.7' },
      { interface: 'eth0', address: '2001:db8::7' },
      { interface: 'wlan0', address: '10.1.2.3' },
    ]);
  });
});

describe('the services in an inventory', () => {
  test('asks the booted systemd for unit files and units, and merges them', async () => {
    const runner = new ScriptedRunner({
      'systemctl list-unit-files --type=service --no-legend --no-pager': { stdout: UNIT_FILES },
      'systemctl list-units --type=service --all --no-legend --no-pager --plain': { stdout: UNITS },
    });
    const { inventory, gaps } = await collect({ root: '/', runner, profile: { ...nothing, init: 'systemd' } });
    expect(runner.calls).toHaveLength(2);
    expect(runner.options[0]).toMatchObject({ env: { LC_ALL: 'C' } });
    expect(inventory.services).toContainEqual({ name: 'nginx', state: 'failed', enabled: true });
    expect(inventory.services).toHaveLength(11);
    expect(gaps).toEqual([]);
  });

  test('leaves the services empty and says the failure when systemctl fails, without failing the inventory', async () => {
    const runner = new ScriptedRunner({
      'systemctl list-unit-files --type=service --no-legend --no-pager': { stdout: UNIT_FILES },
      'systemctl list-units --type=service --all --no-legend --no-pager --plain': {
        code: 1,
        stderr: 'System has not been booted with systemd as init system (PID 1). Can\'t operate.\nFailed to connect to bus: Host is down\n',
      },
    });
    const { inventory, gaps } = await collect({ root: '/', runner, profile: { ...nothing, init: 'systemd' } });
    expect(inventory.services).toEqual([]);
    expect(gaps).toEqual([{ section: 'services', reason: expect.stringMatching(/^systemctl list-units .*exited 1: .*Failed to connect to bus: Host is down$/) }]);
  });

  test('asks OpenRC with rc-status --all', async () => {
    const runner = new ScriptedRunner({ 'rc-status --all': { stdout: RC_STATUS } });
    const { inventory } = await collect({ root: '/', runner, profile: { ...nothing, init: 'openrc' } });
    expect(inventory.services).toContainEqual({ name: 'sshd', state: 'running', enabled: true });
    expect(inventory.services).toContainEqual({ name: 'postgresql', state: 'stopped', enabled: false });
  });

  test('asks no init about a machine under another root, and says services are listed only on the booted one', async () => {
    const runner = new ScriptedRunner();
    const root = await roots.make({ 'run/systemd/system': null });
    const { inventory, gaps } = await collect({ root, runner, profile: { ...nothing, init: 'systemd' } });
    expect(runner.calls).toEqual([]);
    expect(inventory.services).toEqual([]);
    expect(gaps).toEqual([{ section: 'services', reason: expect.stringMatching(/booted machine only, not for the root .*; run without --root/) }]);
  });

  test('lists no services and says nothing is missing on a machine with no init', async () => {
    const runner = new ScriptedRunner();
    const { gaps } = await collect({ root: '/', runner, profile: nothing });
    expect(runner.calls).toEqual([]);
    expect(gaps).toEqual([]);
  });
});

describe('the containers in an inventory', () => {
  test('lists docker\'s containers, running or not', async () => {
    const runner = new ScriptedRunner({ "docker ps --all --format {{json .}}": { stdout: DOCKER_PS } });
    const { inventory } = await collect({ root: '/', runner, profile: { ...nothing, container_runtime: 'docker' } });
    expect(inventory.containers).toEqual([
      { name: 'db', image: 'postgres:16', state: 'exited' },
      { name: 'web', image: 'nginx:1.27', state: 'running' },
    ]);
  });

  test('lists podman\'s containers', async () => {
    const runner = new ScriptedRunner({ 'podman ps --all --format json': { stdout: PODMAN_PS } });
    const { inventory } = await collect({ root: '/', runner, profile: { ...nothing, container_runtime: 'podman' } });
    expect(inventory.containers.map((container) => container.name)).toEqual(['cache', 'node-exporter']);
  });

  test('leaves the containers empty when the engine fails, and keeps the rest of the inventory', async () => {
    const runner = new ScriptedRunner({
      'docker ps --all --format {{json .}}': { code: 1, stderr: 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n' },
      'rc-status --all': { stdout: RC_STATUS },
    });
    const { inventory, gaps } = await collect({ root: '/', runner, profile: { ...nothing, init: 'openrc', container_runtime: 'docker' } });
    expect(inventory.containers).toEqual([]);
    expect(inventory.services).toHaveLength(11);
    expect(gaps).toEqual([{ section: 'containers', reason: expect.stringMatching(/^docker ps .*exited 1: Cannot connect to the Docker daemon/) }]);
  });

  test('leaves the containers empty when the engine cannot even start', async () => {
    const { inventory, gaps } = await collect({ root: '/', runner: new ScriptedRunner(), profile: { ...nothing, container_runtime: 'podman' } });
    expect(inventory.containers).toEqual([]);
    expect(gaps[0]).toEqual({ section: 'containers', reason: 'podman ps --all --format json: could not start: spawn podman ENOENT' });
  });
});

describe('an inventory of a machine with many packages', () => {
  test('reads ten thousand dpkg entries within the bound and says it was cut', async () => {
    const paragraphs = Array.from({ length: 10_000 }, (_, i) => `Package: pkg-${String(i).padStart(5, '0')}\nStatus: install ok installed\nVersion: 1.${i}\n`);
    const root = await roots.make();
    await mkdir(join(root, 'var/lib/dpkg'), { recursive: true });
    await writeFile(join(root, 'var/lib/dpkg/status'), paragraphs.join('\n'));
    const { inventory } = await collect({ root, profile: { ...nothing, package_manager: 'apt' } });
    expect(inventory.packages).toHaveLength(5000);
    expect(inventory.packages[4999]).toEqual({ name: 'pkg-04999', version: '1.4999' });
    expect(inventory.truncated).toBe(true);
  });
});

describe('the packages the real package managers write', () => {
  test('reads back what dpkg installed, and not a package dpkg removed keeping its configuration', async () => {
    const root = await roots.make();
    const debs = join(root, 'debs');
    await makeDpkgRoot(root);
    const tool = await buildDeb(debs, { name: 'mesh-tool', version: '2.1-1', files: { 'usr/share/mesh-tool/version': '2.1\n' } });
    // A file listed in DEBIAN/conffiles is what makes dpkg keep a removed package as config-files.
    const kept = await buildDeb(debs, {
      name: 'mesh-kept',
      version: '1.0-3',
      files: { 'DEBIAN/conffiles': '/etc/mesh-kept.conf\n', 'etc/mesh-kept.conf': 'setting = 1\n' },
    });
    await runTool(['dpkg', '--root', root, '--force-script-chrootless', '--install', tool, kept]);
    await runTool(['dpkg', '--root', root, '--force-script-chrootless', '--remove', 'mesh-kept']);
    const { inventory, gaps } = await collect({ root, profile: { ...nothing, package_manager: 'apt' } });
    expect(inventory.packages).toEqual([{ name: 'mesh-tool', version: '2.1-1' }]);
    expect(gaps).toEqual([]);
  });

  test('reads back what pacman installed', async () => {
    const root = await roots.make();
    await makePacmanRoot(root);
    const file = await buildPacmanPackage(join(root, 'packages'), { name: 'mesh-tool', version: '2.1-1', files: { 'usr/share/mesh-tool/version': '2.1\n' } });
    await runTool(['pacman', '--root', root, '--dbpath', join(root, 'var/lib/pacman'), '--config', '/dev/null', '--noconfirm', '--noscriptlet', '-U', file]);
    const { inventory, gaps } = await collect({ root, profile: { ...nothing, package_manager: 'pacman' } });
    expect(inventory.packages).toEqual([{ name: 'mesh-tool', version: '2.1-1' }]);
    expect(gaps).toEqual([]);
  });
});
