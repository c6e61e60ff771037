import type { ContainerResource } from '../../../../schema/resource';
import { ContainerResource as ContainerSchema } from '../../../../schema/resource';
import { ApplyFailed } from '../applier';
import { createArguments, factsFromInspect, publishSpec, volumeSpec } from './cli-container-backend';
import { compareContainer } from './container-differences';

// Records shaped as Docker 27 and Podman 4 print them (trimmed to the fields the backend reads,
// plus a few it must ignore), so the parsing is checked against the engines' own format and
// not only against the fake engine.
const dockerRecord = [{
  Id: 'c0ffee',
  Name: '/web',
  Image: 'sha256:abc',
  State: { Status: 'running', Running: true, Paused: false, Restarting: false, Pid: 4242 },
  Config: {
    Image: 'nginx:1.27',
    Cmd: ['nginx', '-g', 'daemon off;'],
    Entrypoint: ['/docker-entrypoint.sh'],
    Env: ['TZ=UTC', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'NGINX_VERSION=1.27.0', 'EMPTY='],
    Labels: { 'maintainer': 'NGINX Docker Maintainers', 'mesh.owner': 'nox-mesh-host' },
  },
  HostConfig: {
    Binds: ['/srv/www:/usr/share/nginx/html:ro', 'logs:/var/log/nginx'],
    PortBindings: { '80/tcp': [{ HostIp: '', HostPort: '8080' }], '443/tcp': [{ HostIp: '127.0.0.1', HostPort: '8443' }] },
    RestartPolicy: { Name: 'unless-stopped', MaximumRetryCount: 0 },
  },
  Mounts: [
    { Type: 'bind', Source: '/srv/www', Destination: '/usr/share/nginx/html', Mode: 'ro', RW: false, Propagation: 'rprivate' },
    { Type: 'volume', Name: 'logs', Source: '/var/lib/docker/volumes/logs/_data', Destination: '/var/log/nginx', Driver: 'local', Mode: 'z', RW: true, Propagation: '' },
    { Type: 'tmpfs', Source: '', Destination: '/run', RW: true },
  ],
  NetworkSettings: { Ports: { '80/tcp': [{ HostIp: '0.0.0.0', HostPort: '8080' }, { HostIp: '::', HostPort: '8080' }] } },
}];

const podmanRecord = [{
  Id: 'beef',
  Name: 'web',
  ImageName: 'docker.io/library/nginx:1.27',
  State: { OciVersion: '1.1.0', Status: 'exited', Running: false, ExitCode: 0 },
  Config: {
    Image: 'docker.io/library/nginx:1.27',
    Cmd: ['nginx', '-g', 'daemon off;'],
    Env: ['TZ=UTC', 'container=podman', 'HOSTNAME=beef'],
    Labels: null,
  },
  HostConfig: { PortBindings: {}, RestartPolicy: { Name: '', MaximumRetryCount: 0 } },
  Mounts: [],
}];

function container(fields: Partial<ContainerResource> & { name: string; image: string }): ContainerResource {
  return ContainerSchema.parse({ shape: 'container', ...fields });
}

describe('reading inspect records', () => {
  test("puts Docker's record in the declaration's terms", () => {
    const facts = factsFromInspect(JSON.stringify(dockerRecord), 'docker');
    expect(facts).toMatchObject({
      name: 'web',
      image: 'nginx:1.27',
      command: ['nginx', '-g', 'daemon off;'],
      env: { TZ: 'UTC', NGINX_VERSION: '1.27.0', EMPTY: '' },
      ports: [{ host: 8080, container: 80, protocol: 'tcp' }, { host: 8443, container: 443, protocol: 'tcp', address: '127.0.0.1' }],
      volumes: [{ source: '/srv/www', target: '/usr/share/nginx/html', read_only: true }, { source: 'logs', target: '/var/log/nginx', read_only: false }],
      restart: 'unless-stopped',
      running: true,
      status: 'running',
    });
    expect(facts.ports[0]).not.toHaveProperty('address');
    expect(facts.record).toEqual(dockerRecord[0]);
  });

  test("reads Podman's empty fields as the defaults they stand for", () => {
    const facts = factsFromInspect(JSON.stringify(podmanRecord), 'podman');
    expect(facts).toMatchObject({ name: 'web', image: 'docker.io/library/nginx:1.27', restart: 'no', running: false, status: 'exited', labels: {}, ports: [], volumes: [] });
  });

  test('a declaration matching the Docker record differs only in what the record shows', () => {
    const facts = factsFromInspect(JSON.stringify(dockerRecord), 'docker');
    const declared = container({
      name: 'web',
      image: 'docker.io/library/nginx:1.27',
      command: ['nginx', '-g', 'daemon off;'],
      env: { TZ: 'UTC' },
      ports: [{ host: 8443, container: 443, protocol: 'tcp', address: '127.0.0.1' }, { host: 8080, container: 80, protocol: 'tcp' }],
      volumes: [{ source: 'logs', target: '/var/log/nginx', read_only: false }, { source: '/srv/www', target: '/usr/share/nginx/html', read_only: true }],
    });
    // Same image in another spelling, ports and volumes in another order: only the digest label is missing.
    expect(compareContainer(declared, facts)).toEqual({ replace: ['created from another declaration of it (its mesh.resource-digest label differs)'] });
  });

  test('a container in a restart loop is not running', () => {
    const looping = structuredClone(dockerRecord);
    looping[0]!.State = { Status: 'restarting', Running: true, Paused: false, Restarting: true, Pid: 0 };
    expect(factsFromInspect(JSON.stringify(looping), 'docker')).toMatchObject({ running: false, status: 'restarting' });
  });

  test('a record it cannot read is a failure naming the field, not a guess', () => {
    expect(() => factsFromInspect('[{"Name":"/web"}]', 'docker')).toThrow(ApplyFailed);
    expect(() => factsFromInspect('[{"Name":"/web"}]', 'docker')).toThrow(/cannot read: State/);
    expect(() => factsFromInspect('Error: oops', 'docker')).toThrow('docker container inspect did not print JSON');
  });
});

describe('what differs from a declaration', () => {
  const base = { name: 'web', image: 'nginx:1.27' };
  const facts = (): ReturnType<typeof factsFromInspect> => factsFromInspect(JSON.stringify(dockerRecord), 'docker');

  test('names each field that only a new container can put right', () => {
    const declared = container({
      ...base,
      command: ['nginx'],
      ports: [{ host: 9090, container: 80, protocol: 'tcp' }],
      volumes: [],
      restart: 'always',
    });
    expect(compareContainer(declared, facts()).replace).toEqual([
      'command is ["nginx","-g","daemon off;"], declared ["nginx"]',
      'ports are 127.0.0.1:8443:443/tcp, 8080:80/tcp, declared 9090:80/tcp',
      'volumes are /srv/www:/usr/share/nginx/html:ro, logs:/var/log/nginx, declared none',
      'restart policy is "unless-stopped", declared "always"',
    ]);
  });

  test("leaves the image's default command alone when none is declared", () => {
    const declared = container({ ...base, ports: [{ host: 8080, container: 80, protocol: 'tcp' }, { host: 8443, container: 443, protocol: 'tcp', address: '127.0.0.1' }], volumes: [{ source: '/srv/www', target: '/usr/share/nginx/html', read_only: true }, { source: 'logs', target: '/var/log/nginx', read_only: false }] });
    expect(compareContainer(declared, facts()).replace.filter((line) => line.startsWith('command'))).toEqual([]);
  });
});

describe('create arguments', () => {
  test('an IPv6 bind is bracketed and a read-only volume says ro', () => {
    expect(publishSpec({ host: 53, container: 53, protocol: 'udp', address: '::1' })).toBe('[::1]:53:53/udp');
    expect(publishSpec({ host: 80, container: 8080, protocol: 'tcp' })).toBe('80:8080/tcp');
    expect(volumeSpec({ source: 'data', target: '/data', read_only: true })).toBe('data:/data:ro');
  });

  test('refuses a volume path the engine would split at its colon', () => {
    expect(() => volumeSpec({ source: '/srv/a:b', target: '/data', read_only: false })).toThrow('a volume path containing ":" cannot be passed to the engine: "/srv/a:b"');
  });

  test('the command follows the image, so nothing in it is read as an option', () => {
    const args = createArguments(container({ name: 'x', image: 'busybox:1', command: ['--help'] }), {});
    expect(args.slice(-2)).toEqual(['busybox:1', '--help']);
  });
});
