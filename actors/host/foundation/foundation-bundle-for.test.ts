import { promises as fs } from 'node:fs';
import path from 'node:path';
import { DEFAULT_MESH_DIR } from '../../controller/config/mesh-dir-layout';
import { FoundationBundle } from '../../../schema/foundation-bundle';
import type { Profile } from '../../../schema/profile';
import { resourceKey } from '../../../schema/resource';
import { BROKER_SERVICE, CONTROLLER_SERVICE, FIRST_NODE_MESH_DIR, foundationBundleFor } from './foundation-bundle-for';

const CONTROLLER_PACKAGING = path.join(__dirname, '..', '..', '..', 'packaging', 'controller');

function profile(change: Partial<Profile>): Profile {
  return {
    os: { id: 'debian' },
    arch: 'x86_64',
    kernel: '6.1.0',
    init: 'systemd',
    package_manager: 'apt',
    container_runtime: 'none',
    graphical_session: false,
    host_kind: 'resident',
    hostname: 'first',
    ...change,
  };
}

const keysOf = (bundle: FoundationBundle): string[] => ('resources' in bundle ? bundle.resources.map(resourceKey) : []);

describe('the bundle the host carries for the first node', () => {
  test("makes the mesh where mesh-control's units run it: the controller's own default directory", () => {
    expect(FIRST_NODE_MESH_DIR).toBe(DEFAULT_MESH_DIR);
  });

  test('on systemd and OpenRC, names the services the controller\'s package installs, and writes no definitions', async () => {
    const units = await fs.readdir(CONTROLLER_PACKAGING);

    for (const init of ['systemd', 'openrc'] as const) {
      const bundle = foundationBundleFor(profile({ init }), { root: '/' });
      expect(keysOf(bundle)).toEqual(['package:mesh-control', 'action:mesh-control-init', `service:${BROKER_SERVICE}`, `service:${CONTROLLER_SERVICE}`]);
    }
    expect(units).toEqual(expect.arrayContaining([`${BROKER_SERVICE}.service`, `${CONTROLLER_SERVICE}.service`, `${BROKER_SERVICE}.openrc`, `${CONTROLLER_SERVICE}.openrc`]));
  });

  test('where no init is booted, defines both services for start-stop-daemon, before they are started, with paths in the root', () => {
    const bundle = foundationBundleFor(profile({ init: 'none' }), { root: '/srv/image', brokerUrl: 'tls://mesh.example.net:4222' });
    if (!('resources' in bundle)) throw new Error('expected resources');

    expect(keysOf(bundle)).toEqual([
      'package:mesh-control',
      'action:mesh-control-init',
      `file:/etc/mesh-host/services/${BROKER_SERVICE}.json`,
      `file:/etc/mesh-host/services/${CONTROLLER_SERVICE}.json`,
      `service:${BROKER_SERVICE}`,
      `service:${CONTROLLER_SERVICE}`,
    ]);
    expect(bundle.resources[1]).toMatchObject({
      argv: ['/srv/image/usr/bin/mesh-control', 'init', '--dir', '/srv/image/var/lib/mesh-control', '--broker-url', 'tls://mesh.example.net:4222'],
      guard: { creates: '/var/lib/mesh-control/mesh.json' },
    });
    const definitions = bundle.resources.flatMap((resource) => (resource.shape === 'file' && 'text' in resource.content ? [JSON.parse(resource.content.text) as unknown] : []));
    expect(definitions).toEqual([
      { exec: ['/usr/sbin/nats-server', '-c', '/srv/image/var/lib/mesh-control/broker/nats-server.conf'] },
      { exec: ['/usr/bin/node', '/srv/image/usr/lib/mesh-control/mesh-control.cjs', 'serve', '--dir', '/srv/image/var/lib/mesh-control'] },
    ]);
  });

  test('without a package manager, leaves the package out: mesh-control must already be installed', () => {
    expect(keysOf(foundationBundleFor(profile({ package_manager: 'none' }), { root: '/' }))[0]).toBe('action:mesh-control-init');
  });

  test('on an episodic host, is a file that says why it cannot be the first node and what to do, and names no resource', () => {
    const bundle = FoundationBundle.parse(foundationBundleFor(profile({ host_kind: 'episodic', init: 'none', package_manager: 'none' }), { root: '/' }));

    expect(bundle).toEqual({
      bundle: 'foundation',
      refused: expect.stringMatching(/^an episodic host cannot be the first node: .*takes files, directories and actions only/),
      next: expect.stringContaining('nox-mesh-host enrol --token'),
    });
  });

  test('every bundle it makes is a valid bundle file', () => {
    for (const change of [{}, { init: 'openrc' as const }, { init: 'none' as const, package_manager: 'none' as const }]) {
      const bundle = foundationBundleFor(profile(change), { root: '/' });
      expect(FoundationBundle.parse(JSON.parse(JSON.stringify(bundle)))).toEqual(bundle);
    }
  });
});
