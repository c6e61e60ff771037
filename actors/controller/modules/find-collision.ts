import type { Resource } from '../../../schema/resource';
import type { CollisionParty } from './module-errors';

/** Whatever declares resources on a node: a module at a version, `node declare`, the overlay. */
export interface Declarer {
  party: CollisionParty;
  resources: readonly Resource[];
}

/** Two parties that declare one thing on a node, and that thing. */
export interface Collision {
  key: string;
  parties: [CollisionParty, CollisionParty];
}

/**
 * What one resource occupies on a machine: a path for files and directories (a file and a
 * directory at one path are the same place), the unit for a service, and the name for the
 * rest: `path:/etc/nginx/nginx.conf`, `unit:nginx`, `package:nginx`, `container:db`,
 * `action:make-ca`.
 */
export function collisionKey(resource: Resource): string {
  switch (resource.shape) {
    case 'file':
    case 'directory':
      return `path:${resource.path}`;
    case 'service':
      return `unit:${resource.name}`;
    default:
      return `${resource.shape}:${resource.name}`;
  }
}

/**
 * The first thing two declarers both declare, in the order given (so a listing names the party
 * already on the node first), or undefined when they keep apart. A resource one party lists
 * twice is that party's own business, and its contract refuses it already.
 */
export function findCollision(declarers: readonly Declarer[]): Collision | undefined {
  const owner = new Map<string, CollisionParty>();
  for (const { party, resources } of declarers) {
    const mine = new Set<string>();
    for (const resource of resources) {
      const key = collisionKey(resource);
      if (mine.has(key)) continue;
      mine.add(key);
      const first = owner.get(key);
      if (first !== undefined) return { key, parties: [first, party] };
      owner.set(key, party);
    }
  }
  return undefined;
}
