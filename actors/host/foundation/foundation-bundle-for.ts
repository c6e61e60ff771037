import path from 'node:path';
import type { FoundationBundle } from '../../../schema/foundation-bundle';
import type { Profile } from '../../../schema/profile';
import type { Resource } from '../../../schema/resource';
import { SERVICE_DEFINITIONS_DIR } from '../appliers/service/service-definition';

/**
 * Where the first node's mesh is made: `mesh-control`'s default directory (DEFAULT_MESH_DIR in
 * actors/controller/config/mesh-dir-layout.ts, which the host cannot import: it brings the
 * controller's store). The controller's package's units run on this directory.
 */
export const FIRST_NODE_MESH_DIR = '/var/lib/mesh-control';

/** The controller's Debian package (packaging/controller), which carries the units below. */
export const CONTROLLER_PACKAGE = 'mesh-control';
/** The broker's service: nats-server on the configuration `mesh-control init` wrote. */
export const BROKER_SERVICE = 'mesh-control-broker';
/** The controller's service: `mesh-control serve`. */
export const CONTROLLER_SERVICE = 'mesh-control';

/** What the carried bundle is made for besides the machine's profile. */
export interface FoundationOptions {
  /** The machine's root (`--root`); `/` on a machine. */
  root: string;
  /** How other machines will reach the broker, `tls://HOST:PORT`; `mesh-control init`'s default unless given. */
  brokerUrl?: string;
}

/**
 * The bundle the host carries for raising a mesh on this machine, made from its profile: the
 * controller's package (from the machine's own repositories: the mesh's cannot serve the
 * machine that raises it), the mesh made by `mesh-control init` on the embedded store, then the
 * broker and the controller as services of the machine's init, started and enabled at boot.
 *
 * Where no init is booted (a container, a chroot, this kind of test machine) services are run by
 * start-stop-daemon from definitions the bundle writes, since nobody else would: the units the
 * package installs are for systemd and OpenRC. Paths the package installs or `init` makes are
 * under the root; the programs the package depends on (node, nats-server) are the machine's, as
 * a service's process runs on this machine, not in the root (see start-stop-daemon.backend.ts).
 *
 * An episodic host gets a bundle that says why it cannot be the first node (seed 000: every step
 * of raising a foundation is a package or a service, which it does not take).
 */
export function foundationBundleFor(profile: Profile, options: FoundationOptions): FoundationBundle {
  if (profile.host_kind === 'episodic') {
    return {
      bundle: 'foundation',
      refused:
        'an episodic host cannot be the first node: raising a mesh installs the controller\'s package and keeps the broker and the controller running as services, ' +
        'and an episodic host takes files, directories and actions only, and runs only when its platform lets it',
      next:
        'raise the mesh on a resident machine (nox-mesh-host reconcile there), then on that machine run mesh-control token issue --new, ' +
        'and here nox-mesh-host enrol --token <the token>',
    };
  }
  const inRoot = (file: string): string => path.join(options.root, file);
  const meshDir = inRoot(FIRST_NODE_MESH_DIR);
  const resources: Resource[] = [];
  if (profile.package_manager !== 'none') resources.push({ shape: 'package', name: CONTROLLER_PACKAGE });
  resources.push({
    shape: 'action',
    name: 'mesh-control-init',
    argv: [inRoot('/usr/bin/mesh-control'), 'init', '--dir', meshDir, ...(options.brokerUrl === undefined ? [] : ['--broker-url', options.brokerUrl])],
    // Making the store applies every migration to a new PGlite: seconds, not the default's minutes.
    timeout_seconds: 600,
    // mesh.json is written last by init: its presence means the whole mesh is there.
    guard: { creates: path.posix.join(FIRST_NODE_MESH_DIR, 'mesh.json') },
  });
  if (profile.init !== 'systemd' && profile.init !== 'openrc') {
    resources.push(definition(BROKER_SERVICE, ['/usr/sbin/nats-server', '-c', path.join(meshDir, 'broker', 'nats-server.conf')]));
    resources.push(definition(CONTROLLER_SERVICE, ['/usr/bin/node', inRoot('/usr/lib/mesh-control/mesh-control.cjs'), 'serve', '--dir', meshDir]));
  }
  resources.push({ shape: 'service', name: BROKER_SERVICE, state: 'running', enabled: true });
  resources.push({ shape: 'service', name: CONTROLLER_SERVICE, state: 'running', enabled: true });
  return {
    bundle: 'foundation',
    about: `raises a mesh on this machine: the controller's package, the mesh in ${meshDir} on the embedded store (PGlite), ` +
      `and the broker (${BROKER_SERVICE}) and the controller (${CONTROLLER_SERVICE}) as services`,
    resources,
  };
}

/** A start-stop-daemon service definition, as a file resource. */
function definition(name: string, exec: string[]): Resource {
  return {
    shape: 'file',
    path: path.posix.join(SERVICE_DEFINITIONS_DIR, `${name}.json`),
    content: { text: `${JSON.stringify({ exec }, null, 2)}\n` },
    mode: '0644',
    owner: 'root',
    group: 'root',
  };
}
