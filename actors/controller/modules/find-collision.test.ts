import type { Resource } from '../../../schema/resource';
import { collisionKey, findCollision } from './find-collision';

const file = (path: string): Resource => ({ shape: 'file', path, content: { text: '' }, mode: '0644', owner: 'root', group: 'root' });
const directory = (path: string): Resource => ({ shape: 'directory', path, mode: '0755', owner: 'root', group: 'root' });
const pkg = (name: string): Resource => ({ shape: 'package', name });
const service = (name: string): Resource => ({ shape: 'service', name, state: 'running', enabled: true });
const container = (name: string): Resource => ({ shape: 'container', name, image: 'docker.io/library/nginx:1.27', env: {}, ports: [], volumes: [], restart: 'unless-stopped' });

describe('collisions between the parties on a node', () => {
  test('names a file path, package, unit or container two parties declare, the party already there first', () => {
    const cases: Array<[Resource, Resource, string]> = [
      [file('/etc/nginx/nginx.conf'), file('/etc/nginx/nginx.conf'), 'path:/etc/nginx/nginx.conf'],
      [pkg('nginx'), pkg('nginx'), 'package:nginx'],
      [service('nginx'), service('nginx'), 'unit:nginx'],
      [container('db'), container('db'), 'container:db'],
    ];
    for (const [mine, theirs, key] of cases) {
      const collision = findCollision([
        { party: { name: 'module web 1.0', module: 'web' }, resources: [mine] },
        { party: { name: 'module proxy 2.1', module: 'proxy' }, resources: [theirs] },
      ]);
      expect(collision).toEqual({ key, parties: [{ name: 'module web 1.0', module: 'web' }, { name: 'module proxy 2.1', module: 'proxy' }] });
    }
  });

  test('a file and a directory at one path are one place on the machine', () => {
    expect(collisionKey(directory('/srv/www'))).toBe(collisionKey(file('/srv/www')));
    const collision = findCollision([
      { party: { name: 'node declare' }, resources: [directory('/srv/www')] },
      { party: { name: 'module web 1.0' }, resources: [file('/srv/www')] },
    ]);
    expect(collision?.key).toBe('path:/srv/www');
  });

  test('a package and a unit of one name are different things', () => {
    expect(findCollision([
      { party: { name: 'module a 1' }, resources: [pkg('nginx')] },
      { party: { name: 'module b 1' }, resources: [service('nginx'), file('/srv/b')] },
    ])).toBeUndefined();
  });

  test('finds none among parties that keep apart', () => {
    expect(findCollision([
      { party: { name: 'the overlay' }, resources: [file('/etc/mesh/hosts')] },
      { party: { name: 'module web 1.0' }, resources: [file('/srv/web/index.html'), pkg('nginx')] },
      { party: { name: 'module db 3' }, resources: [container('db'), directory('/srv/db')] },
    ])).toBeUndefined();
  });
});
