import type { Resource } from '../../../schema/resource';
import { MESH_DNS_RESOLVER } from '../../../schema/seat';
import { seatResources, seatRoster, type SeatState } from './compose-seats';
import { RESOLV_CONF_PATH, RESOLVER_CONFIG_PATH } from './render-resolver';

// What the seats compose on a node, as pure functions of the seats and the overlay's names.

const NAMES = ['a', 'b', 'c', 'd', 'e'].map((name, index) => ({ name, address: `10.77.0.${index + 1}` }));
const state = (holders: Record<string, string[]>, replicated: string[] = [MESH_DNS_RESOLVER]): SeatState => ({
  holders: new Map(Object.entries(holders)),
  replicated: new Set(replicated),
});
const text = (resources: Resource[], path: string): string | undefined => {
  const file = resources.find((resource) => resource.shape === 'file' && resource.path === path);
  return file?.shape === 'file' && 'text' in file.content ? file.content.text : undefined;
};
const debian = { init: 'systemd', package_manager: 'apt' } as const;

describe('what the seats compose on a node', () => {
  test('no resolver holder on the overlay composes nothing, so a node keeps its own resolv.conf', () => {
    expect(seatResources('a', state({}), NAMES, debian)).toEqual([]);
    expect(seatResources('a', state({ [MESH_DNS_RESOLVER]: ['gone'] }), NAMES, debian)).toEqual([]);
    expect(seatRoster('a', state({ [MESH_DNS_RESOLVER]: ['gone'] }), NAMES)).toBeUndefined();
  });

  test('resolv.conf lists the holders, this machine first, and no nameserver that is not one', () => {
    const resolv = text(seatResources('c', state({ [MESH_DNS_RESOLVER]: ['a', 'c'] }), NAMES, debian), RESOLV_CONF_PATH) ?? '';
    expect(resolv.split('\n').filter((line) => line.startsWith('nameserver'))).toEqual(['nameserver 10.77.0.3', 'nameserver 10.77.0.1']);
    expect(resolv).toMatch(/^options timeout:1 attempts:2$/m);
  });

  test('more holders than a resolver reads are cut to three, and the file says so', () => {
    const resolv = text(seatResources('e', state({ [MESH_DNS_RESOLVER]: ['a', 'b', 'c', 'd'] }), NAMES, debian), RESOLV_CONF_PATH) ?? '';
    expect(resolv.match(/^nameserver /gm)).toHaveLength(3);
    expect(resolv).toContain('# 1 more holder(s) left out');
  });

  test('a holder on systemd gets the package, the configuration, its unit, the service and a reload per names file', () => {
    const resources = seatResources('a', state({ [MESH_DNS_RESOLVER]: ['a'] }), NAMES, debian);
    expect(resources.map((resource) => (resource.shape === 'file' ? resource.path : `${resource.shape}:${'name' in resource ? resource.name : ''}`))).toEqual([
      'package:dnsmasq-base',
      RESOLVER_CONFIG_PATH,
      '/etc/systemd/system/mesh-dns-resolver.service',
      'service:mesh-dns-resolver',
      'action:mesh-dns-reload',
      RESOLV_CONF_PATH,
    ]);
    const reload = resources.find((resource) => resource.shape === 'action');
    const other = seatResources('a', state({ [MESH_DNS_RESOLVER]: ['a'] }), NAMES.slice(0, 2), debian).find((resource) => resource.shape === 'action');
    // A node joining or leaving changes the names file, and with it the stamp: the server is told again.
    expect(reload).not.toEqual(other);
  });

  test('an OpenRC holder gets an init script; one without an init the mesh drives gets the files alone', () => {
    const openrc = seatResources('a', state({ [MESH_DNS_RESOLVER]: ['a'] }), NAMES, { init: 'openrc', package_manager: 'apk' });
    expect(openrc).toEqual(expect.arrayContaining([{ shape: 'package', name: 'dnsmasq' }, expect.objectContaining({ path: '/etc/init.d/mesh-dns-resolver', mode: '0755' })]));
    const bare = seatResources('a', state({ [MESH_DNS_RESOLVER]: ['a'] }), NAMES, { init: 'none', package_manager: 'none' });
    expect(bare.map((resource) => resource.shape)).toEqual(['file', 'file']);
    expect(text(bare, RESOLVER_CONFIG_PATH)).toContain('listen-address=10.77.0.1\n');
  });

  test('the roster names each replicated seat with a holder, this machine first, and leaves single seats out', () => {
    const seats = state({ [MESH_DNS_RESOLVER]: ['a', 'b', 'd'], 'build-cache': ['c', 'b'], solo: ['a'] }, [MESH_DNS_RESOLVER, 'build-cache']);
    expect(seatRoster('b', seats, NAMES)).toEqual({ 'build-cache': ['b', 'c'], [MESH_DNS_RESOLVER]: ['b', 'a', 'd'] });
    expect(seatRoster('e', seats, NAMES)).toEqual({ 'build-cache': ['b', 'c'], [MESH_DNS_RESOLVER]: ['a', 'b', 'd'] });
  });
});
