import { expectRefused, expectRoundTrip, type RefusalCase } from './expect-contract';
import { Profile } from './profile';

const alpine = {
  os: { id: 'alpine', version_id: '3.20.3', pretty_name: 'Alpine Linux v3.20' },
  arch: 'x86_64',
  kernel: '6.6.58-0-lts',
  init: 'openrc',
  package_manager: 'apk',
  container_runtime: 'docker',
  graphical_session: false,
  host_kind: 'resident',
  hostname: 'hub',
};

describe('the profile', () => {
  it('round-trips an Alpine server profile through JSON', () => {
    expect(expectRoundTrip(Profile, alpine, 'profile')).toEqual(alpine);
  });

  it('round-trips an Arch laptop with no os version, as rolling releases have none', () => {
    const arch = { ...alpine, os: { id: 'arch', pretty_name: 'Arch Linux' }, kernel: '6.11.5-arch1-1', init: 'systemd', package_manager: 'pacman', container_runtime: 'podman', graphical_session: true, hostname: 'laptop' };
    expect(expectRoundTrip(Profile, arch, 'profile')).toEqual(arch);
  });

  it('round-trips the WireGuard key path a host under --state-dir says at enrolment', () => {
    const moved = { ...alpine, wireguard: 'wireguard-go', wireguard_key_path: '/srv/mesh-state/wireguard.key' };
    expect(expectRoundTrip(Profile, moved, 'profile')).toEqual(moved);
  });

  it('takes a key path under a folder with a space or a semicolon, which PostUp quotes', () => {
    for (const keyPath of ['/tmp/mesh hosts/a1/wireguard.key', '/var/lib/k;reboot']) {
      const moved = { ...alpine, wireguard_key_path: keyPath };
      expect(expectRoundTrip(Profile, moved, 'profile')).toEqual(moved);
    }
  });

  it.each<RefusalCase>([
    { name: 'an os id with capitals', input: { ...alpine, os: { id: 'Alpine' } }, path: 'profile.os.id', says: /os-release ID/ },
    { name: 'an architecture with a space', input: { ...alpine, arch: 'x86 64' }, path: 'profile.arch', says: /architecture/ },
    { name: 'an unknown init', input: { ...alpine, init: 'runit' }, path: 'profile.init' },
    { name: 'an unknown package manager', input: { ...alpine, package_manager: 'dnf' }, path: 'profile.package_manager' },
    { name: 'an unknown container runtime', input: { ...alpine, container_runtime: 'lxc' }, path: 'profile.container_runtime' },
    { name: 'a graphical session given as text', input: { ...alpine, graphical_session: 'no' }, path: 'profile.graphical_session', says: /expected boolean/ },
    { name: 'an empty kernel release', input: { ...alpine, kernel: '' }, path: 'profile.kernel', says: /must not be empty/ },
    { name: 'a missing host kind', input: { ...alpine, host_kind: undefined }, path: 'profile.host_kind', says: /required/ },
    // wg-quick runs PostUp through a shell as root: nothing a shell reads specially gets in.
    { name: 'a key path that would close its quotes', input: { ...alpine, wireguard_key_path: "/var/lib/k';reboot;'" }, path: 'profile.wireguard_key_path', says: /absolute path/ },
    { name: 'a key path wg-quick would cut at a comment', input: { ...alpine, wireguard_key_path: '/var/lib/k#x' }, path: 'profile.wireguard_key_path', says: /absolute path/ },
    { name: 'a key path with a line break', input: { ...alpine, wireguard_key_path: '/var/lib/k\nPostUp = reboot' }, path: 'profile.wireguard_key_path', says: /absolute path/ },
    { name: 'a relative key path', input: { ...alpine, wireguard_key_path: 'var/lib/mesh-host/wireguard.key' }, path: 'profile.wireguard_key_path', says: /absolute path/ },
    { name: 'a key path climbing out with ..', input: { ...alpine, wireguard_key_path: '/srv/../etc/shadow' }, path: 'profile.wireguard_key_path', says: /\.\./ },
    { name: 'an unknown field in the os', input: { ...alpine, os: { ...alpine.os, codename: 'x' } }, path: 'profile.os.codename', says: /unknown field/ },
  ])('refuses $name', ({ input, path, says }) => {
    expectRefused(Profile, input, 'profile', path, says);
  });
});
