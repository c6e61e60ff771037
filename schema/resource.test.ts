import type * as z from 'zod';
import { MAX_CONTENT_BYTES } from './bounds';
import { expectRefused, expectRoundTrip, type RefusalCase } from './expect-contract';
import { ContractViolation, parseContract } from './parse';
import {
  type ActionResource,
  type ContainerResource,
  type DirectoryResource,
  type FileResource,
  type PackageResource,
  Resource,
  ResourceList,
  SHAPES_FOR_HOST_KIND,
  parsedResourceDigest,
  resourceDigest,
  resourceKey,
  type ServiceResource,
  shapeOfKey,
} from './resource';

const motd = {
  shape: 'file',
  path: '/etc/motd',
  content: { text: 'Welcome to workstation. This machine is managed by the mesh.\n' },
  mode: '0644',
  owner: 'root',
  group: 'root',
} satisfies z.input<typeof FileResource>;
const caddyData = { shape: 'directory', path: '/srv/caddy/data', mode: '0750', owner: 'caddy', group: '1000' } satisfies z.input<typeof DirectoryResource>;
const nginx = { shape: 'package', name: 'nginx', version: '1.26.2-r0' } satisfies z.input<typeof PackageResource>;
const registry = {
  shape: 'container',
  name: 'registry',
  image: 'docker.io/library/registry:2.8.3',
  command: ['/entrypoint.sh', '/etc/docker/registry/config.yml'],
  env: { REGISTRY_STORAGE_DELETE_ENABLED: 'true' },
  ports: [{ host: 5000, container: 5000, protocol: 'tcp', address: '10.77.0.5' }],
  volumes: [
    { source: '/srv/registry', target: '/var/lib/registry', read_only: false },
    { source: 'registry-certs', target: '/certs', read_only: true },
  ],
  restart: 'unless-stopped',
} satisfies z.input<typeof ContainerResource>;
const sshd = { shape: 'service', name: 'sshd', state: 'running', enabled: true } satisfies z.input<typeof ServiceResource>;
const makeCa = {
  shape: 'action',
  name: 'make-overlay-ca',
  argv: ['/usr/bin/openssl', 'req', '-x509', '-newkey', 'ed25519', '-keyout', '/etc/mesh/ca.key', '-out', '/etc/mesh/ca.crt'],
  env: { OPENSSL_CONF: '/etc/ssl/openssl.cnf' },
  cwd: '/etc/mesh',
  timeout_seconds: 60,
  guard: { creates: '/etc/mesh/ca.crt' },
} satisfies z.input<typeof ActionResource>;

const refuses = (cases: RefusalCase[]) =>
  it.each(cases)('refuses $name', ({ input, path, says }) => {
    expectRefused(Resource, input, 'resource', path, says);
  });

describe('file resources', () => {
  it('takes a content of exactly the bound and refuses one byte more, as text or as base64', () => {
    const at = 'x'.repeat(MAX_CONTENT_BYTES);
    expect(parseContract(Resource, { shape: 'file', path: '/srv/at', content: { text: at } }, 'resource')).toMatchObject({ content: { text: at } });
    expectRefused(Resource, { shape: 'file', path: '/srv/over', content: { text: `${at}é` } }, 'resource', 'resource.content.text', /8,388,610 bytes, over the 8 MiB a file resource may hold; ship a file that large in a package/);
    const overBase64 = Buffer.alloc(MAX_CONTENT_BYTES + 1).toString('base64');
    expectRefused(Resource, { shape: 'file', path: '/srv/over', content: { base64: overBase64 } }, 'resource', 'resource.content.base64', /8,388,609 bytes, over the 8 MiB/);
  });

  it('round-trips a file with text content through JSON', () => {
    expect(expectRoundTrip(Resource, motd, 'resource')).toEqual(motd);
  });

  it('fills in mode 0644 and root ownership when they are left out', () => {
    expect(parseContract(Resource, { shape: 'file', path: '/etc/motd', content: { base64: 'aGk=' } }, 'resource')).toEqual({
      shape: 'file',
      path: '/etc/motd',
      content: { base64: 'aGk=' },
      mode: '0644',
      owner: 'root',
      group: 'root',
    });
  });

  refuses([
    { name: 'a relative path', input: { ...motd, path: 'etc/motd' }, path: 'resource.path', says: /absolute path/ },
    { name: 'a path climbing out with ..', input: { ...motd, path: '/etc/../root/.ssh/authorized_keys' }, path: 'resource.path', says: /"\.\."/ },
    { name: 'a path carrying a NUL byte', input: { ...motd, path: '/etc/motd\0.bak' }, path: 'resource.path', says: /NUL/ },
    { name: 'a path that is not normalized', input: { ...motd, path: '/etc//motd/' }, path: 'resource.path', says: /normalized/ },
    { name: 'the root directory as a file', input: { ...motd, path: '/' }, path: 'resource.path', says: /root directory/ },
    { name: 'a mode that is not octal', input: { ...motd, mode: '0999' }, path: 'resource.mode', says: /octal mode like "0644"/ },
    { name: 'a three-digit mode', input: { ...motd, mode: '644' }, path: 'resource.mode', says: /octal mode/ },
    { name: 'a mode written as a number', input: { ...motd, mode: 420 }, path: 'resource.mode', says: /octal mode like "0644", as a string/ },
    { name: 'content with both text and base64', input: { ...motd, content: { text: 'a', base64: 'YQ==' } }, path: 'resource.content', says: /\{"text": "…"\}, \{"base64": "…"\} or \{"secret": "NAME"\}/ },
    { name: 'content whose base64 is not base64', input: { ...motd, content: { base64: 'not base64!' } }, path: 'resource.content.base64', says: /expected base64/ },
    { name: 'content whose text is not a string', input: { ...motd, content: { text: 42 } }, path: 'resource.content.text', says: /expected string, got number/ },
    { name: 'missing content', input: { shape: 'file', path: '/etc/motd' }, path: 'resource.content' },
    { name: 'an owner with a space in it', input: { ...motd, owner: 'web admin' }, path: 'resource.owner', says: /user or group/ },
    { name: 'a field files do not have', input: { ...motd, checksum: 'abc' }, path: 'resource.checksum', says: /unknown field/ },
  ]);
});

describe('directory resources', () => {
  it('round-trips a directory through JSON', () => {
    expect(expectRoundTrip(Resource, caddyData, 'resource')).toEqual(caddyData);
  });

  it('fills in mode 0755 when it is left out', () => {
    expect(parseContract(Resource, { shape: 'directory', path: '/srv/www' }, 'resource')).toMatchObject({ mode: '0755', owner: 'root' });
  });

  refuses([
    { name: 'a directory without a path', input: { shape: 'directory', mode: '0755' }, path: 'resource.path', says: /required/ },
    { name: 'a directory path with a trailing slash', input: { ...caddyData, path: '/srv/caddy/' }, path: 'resource.path', says: /normalized/ },
    { name: 'a mode above 7777', input: { ...caddyData, mode: '17777' }, path: 'resource.mode', says: /octal mode/ },
    { name: 'an empty group', input: { ...caddyData, group: '' }, path: 'resource.group' },
    { name: 'content on a directory', input: { ...caddyData, content: { text: '' } }, path: 'resource.content', says: /unknown field/ },
  ]);
});

describe('package resources', () => {
  it('round-trips a pinned package through JSON', () => {
    expect(expectRoundTrip(Resource, nginx, 'resource')).toEqual(nginx);
  });

  it('accepts a package with no version and a Debian epoch version', () => {
    expect(parseContract(Resource, { shape: 'package', name: 'htop' }, 'resource')).toEqual({ shape: 'package', name: 'htop' });
    expect(parseContract(Resource, { shape: 'package', name: 'libc6', version: '1:2.36-9+deb12u4' }, 'resource')).toMatchObject({ version: '1:2.36-9+deb12u4' });
  });

  refuses([
    { name: 'a package name that reads as an option', input: { ...nginx, name: '-rf' }, path: 'resource.name', says: /package name/ },
    { name: 'a package name with a space', input: { ...nginx, name: 'nginx extras' }, path: 'resource.name', says: /package name/ },
    { name: 'a version that reads as an option', input: { ...nginx, version: '--force' }, path: 'resource.version', says: /exact version/ },
    { name: 'a numeric version', input: { ...nginx, version: 1.26 }, path: 'resource.version', says: /expected string, got number/ },
    { name: 'a package without a name', input: { shape: 'package' }, path: 'resource.name', says: /required/ },
    { name: 'a state on a package', input: { ...nginx, state: 'latest' }, path: 'resource.state', says: /unknown field/ },
  ]);
});

describe('container resources', () => {
  it('round-trips a container with ports and volumes through JSON', () => {
    expect(expectRoundTrip(Resource, registry, 'resource')).toEqual(registry);
  });

  it('fills in empty env, ports and volumes and restart unless-stopped', () => {
    expect(parseContract(Resource, { shape: 'container', name: 'whoami', image: 'traefik/whoami' }, 'resource')).toEqual({
      shape: 'container',
      name: 'whoami',
      image: 'traefik/whoami',
      env: {},
      ports: [],
      volumes: [],
      restart: 'unless-stopped',
    });
  });

  it('fills in tcp and read-write for a port and a volume left unqualified', () => {
    const parsed = parseContract(
      Resource,
      { shape: 'container', name: 'web', image: 'nginx', ports: [{ host: 8080, container: 80 }], volumes: [{ source: 'web-data', target: '/data' }] },
      'resource',
    );
    expect(parsed).toMatchObject({ ports: [{ host: 8080, container: 80, protocol: 'tcp' }], volumes: [{ read_only: false }] });
  });

  refuses([
    { name: 'a container name starting with an underscore', input: { ...registry, name: '_registry' }, path: 'resource.name', says: /container name/ },
    { name: 'an image reference with a space', input: { ...registry, image: 'registry 2' }, path: 'resource.image', says: /image reference/ },
    { name: 'an empty command', input: { ...registry, command: [] }, path: 'resource.command', says: /image default/ },
    { name: 'an environment variable name with a space', input: { ...registry, env: { 'BAD NAME': 'x' } }, path: 'resource.env["BAD NAME"]', says: /environment variable name/ },
    { name: 'an environment value that is not a string', input: { ...registry, env: { PORT: 5000 } }, path: 'resource.env.PORT', says: /expected string, got number/ },
    { name: 'host port 0', input: { ...registry, ports: [{ host: 0, container: 5000 }] }, path: 'resource.ports[0].host', says: /1-65535/ },
    { name: 'a container port above 65535', input: { ...registry, ports: [{ host: 5000, container: 70000 }] }, path: 'resource.ports[0].container', says: /1-65535/ },
    { name: 'a port protocol other than tcp or udp', input: { ...registry, ports: [{ host: 5000, container: 5000, protocol: 'sctp' }] }, path: 'resource.ports[0].protocol' },
    { name: 'a bind address that is not an IP address', input: { ...registry, ports: [{ host: 5000, container: 5000, address: 'localhost' }] }, path: 'resource.ports[0].address', says: /IP address/ },
    { name: 'a relative volume target', input: { ...registry, volumes: [{ source: '/srv/registry', target: 'var/lib/registry' }] }, path: 'resource.volumes[0].target', says: /absolute path/ },
    { name: 'a volume source that is neither a path nor a name', input: { ...registry, volumes: [{ source: '../registry', target: '/data' }] }, path: 'resource.volumes[0].source', says: /absolute host path or a volume name/ },
    { name: 'an unknown restart policy', input: { ...registry, restart: 'sometimes' }, path: 'resource.restart' },
  ]);
});

describe('service resources', () => {
  it('round-trips a service through JSON', () => {
    expect(expectRoundTrip(Resource, sshd, 'resource')).toEqual(sshd);
  });

  refuses([
    { name: 'a service state of "started"', input: { ...sshd, state: 'started' }, path: 'resource.state', says: /running/ },
    { name: 'enabled given as a string', input: { ...sshd, enabled: 'yes' }, path: 'resource.enabled', says: /expected boolean, got string/ },
    { name: 'a service without enabled', input: { shape: 'service', name: 'sshd', state: 'running' }, path: 'resource.enabled', says: /required/ },
    { name: 'a service name that reads as an option', input: { ...sshd, name: '--now' }, path: 'resource.name', says: /service name/ },
    { name: 'a restart field on a service', input: { ...sshd, restart: 'always' }, path: 'resource.restart', says: /unknown field/ },
  ]);
});

describe('action resources', () => {
  it('round-trips an action guarded by a created file through JSON', () => {
    expect(expectRoundTrip(Resource, makeCa, 'resource')).toEqual(makeCa);
  });

  it('round-trips an action guarded by an unless command and fills in a 300 s timeout', () => {
    const input = { shape: 'action', name: 'load-wireguard', argv: ['modprobe', 'wireguard'], guard: { unless: ['grep', '-q', '^wireguard ', '/proc/modules'] } };
    expect(expectRoundTrip(Resource, input, 'resource')).toEqual({ ...input, timeout_seconds: 300 });
  });

  refuses([
    { name: 'an action with an empty argv', input: { ...makeCa, argv: [] }, path: 'resource.argv', says: /needs a command/ },
    { name: 'an action whose program is empty', input: { ...makeCa, argv: [''] }, path: 'resource.argv', says: /name a program/ },
    { name: 'an action without a guard', input: { ...makeCa, guard: undefined }, path: 'resource.guard', says: /applying again does nothing/ },
    { name: 'a guard that creates a relative path', input: { ...makeCa, guard: { creates: 'ca.crt' } }, path: 'resource.guard.creates', says: /absolute path/ },
    { name: 'an unless guard with no command', input: { ...makeCa, guard: { unless: [] } }, path: 'resource.guard.unless', says: /needs a command/ },
    { name: 'a guard with both creates and unless', input: { ...makeCa, guard: { creates: '/x', unless: ['true'] } }, path: 'resource.guard' },
    { name: 'a timeout of zero', input: { ...makeCa, timeout_seconds: 0 }, path: 'resource.timeout_seconds', says: /1 to 86400/ },
    { name: 'a timeout longer than a day', input: { ...makeCa, timeout_seconds: 86401 }, path: 'resource.timeout_seconds', says: /1 to 86400/ },
    { name: 'a fractional timeout', input: { ...makeCa, timeout_seconds: 1.5 }, path: 'resource.timeout_seconds', says: /whole number/ },
    { name: 'a relative working directory', input: { ...makeCa, cwd: 'etc/mesh' }, path: 'resource.cwd', says: /absolute path/ },
    { name: 'an action name with capitals and spaces', input: { ...makeCa, name: 'Make CA' }, path: 'resource.name', says: /action name/ },
  ]);
});

describe('resource shapes', () => {
  refuses([
    { name: 'an unknown shape', input: { shape: 'cronjob', name: 'backup' }, path: 'resource.shape', says: /one of "file", "directory"/ },
    { name: 'a resource that is not an object', input: 'file:/etc/motd', path: 'resource' },
  ]);

  it('lets an episodic host take files, directories and actions only', () => {
    expect([...SHAPES_FOR_HOST_KIND.episodic].sort()).toEqual(['action', 'directory', 'file']);
    expect(SHAPES_FOR_HOST_KIND.resident).toHaveLength(6);
  });
});

describe('resourceKey', () => {
  it.each([
    ['file', motd, 'file:/etc/motd'],
    ['directory', caddyData, 'directory:/srv/caddy/data'],
    ['package', nginx, 'package:nginx'],
    ['container', registry, 'container:registry'],
    ['service', sshd, 'service:sshd'],
    ['action', makeCa, 'action:make-overlay-ca'],
  ])('keys a %s resource by its path or name', (_shape, input, key) => {
    expect(resourceKey(parseContract(Resource, input, 'resource'))).toBe(key);
  });

  it('keeps the key when everything but the path or name changes', () => {
    const before = parseContract(Resource, makeCa, 'resource');
    const after = parseContract(Resource, { ...makeCa, argv: ['/usr/local/bin/make-ca'], timeout_seconds: 5 }, 'resource');
    expect(resourceKey(after)).toBe(resourceKey(before));
  });

  it('reads the shape back out of a key', () => {
    expect(shapeOfKey('file:/etc/motd')).toBe('file');
    expect(shapeOfKey('container:registry')).toBe('container');
  });
});

describe('resourceDigest', () => {
  it('is 64 hex digits', () => {
    expect(resourceDigest(motd)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('changes when the content changes', () => {
    expect(resourceDigest({ ...motd, content: { text: 'Welcome.\n' } })).not.toBe(resourceDigest(motd));
  });

  it('does not change when the keys come in another order', () => {
    const reordered = { group: 'root', owner: 'root', mode: '0644', content: motd.content, path: motd.path, shape: 'file' as const };
    expect(resourceDigest(reordered)).toBe(resourceDigest(motd));
  });

  it('does not change when a default is written out rather than left to apply', () => {
    expect(resourceDigest({ shape: 'directory', path: '/srv/www' })).toBe(
      resourceDigest({ shape: 'directory', path: '/srv/www', mode: '0755', owner: 'root', group: 'root' }),
    );
  });

  it('refuses to digest a malformed resource', () => {
    expect(() => resourceDigest({ ...motd, mode: 'rw-r--r--' })).toThrow(ContractViolation);
  });

  it('is the same from what the schema gave, unparsed, for every shape and with defaults left out', () => {
    const written = [motd, caddyData, nginx, registry, sshd, makeCa, { shape: 'directory', path: '/srv/www' }, { shape: 'file', path: '/etc/issue', content: { text: '' } }] as const;
    for (const resource of written) {
      const parsed = parseContract(Resource, resource, 'resource');
      expect(parsedResourceDigest(parsed)).toBe(resourceDigest(resource));
    }
  });
});

describe('resource lists', () => {
  it('accepts resources with distinct keys', () => {
    expect(parseContract(ResourceList, [motd, caddyData, nginx, registry, sshd, makeCa], 'resources')).toHaveLength(6);
  });

  it('refuses two resources with the same key, naming the key and both places', () => {
    const violation = expectRefused(
      ResourceList,
      [motd, nginx, { ...motd, content: { text: 'other\n' } }],
      'resources',
      'resources[2]',
      /duplicate resource key "file:\/etc\/motd": already at \[0\]/,
    );
    expect(violation.issues).toHaveLength(1);
  });

  it('refuses a directory and a file at one path', () => {
    expectRefused(ResourceList, [{ shape: 'directory', path: '/etc/motd' }, motd], 'resources', 'resources[1].path', /a directory is already declared at "\/etc\/motd": \[0\]/);
  });
});
