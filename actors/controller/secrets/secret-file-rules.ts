import type { Resource } from '../../../schema/resource';
import { OperatorError } from '../../shared/operator-error';

/** A module file holds a sealed box: only the controller seals, to one node's key at a time. */
export class ModuleCarriesSealedBox extends OperatorError {
  constructor(module: string, path: string) {
    super(`module ${module}'s file ${path} carries a sealed box, which only the controller makes, for one node; nothing was registered`, {
      next: `keep the value as a secret (mesh-control secret set ${module} NAME --from-file FILE) and give the file "content": {"secret": "NAME"}`,
    });
  }
}

/** A module file names a secret and leaves its owner to the default. */
export class SecretFileOwnerUnsaid extends OperatorError {
  constructor(module: string, path: string) {
    super(`module ${module}'s file ${path} holds a secret and does not say its "owner"; nothing was registered`, {
      next: 'name the account that reads it ("owner": "app", "mode": "0600" or "0640" with its "group"): left to the default it is written root\'s, and a program running as its own account cannot read it; write "owner": "root" if root reads it',
    });
  }
}

/**
 * Refuses module.json resources that would go wrong with a secret: a sealed box given by hand,
 * and a secret file that does not name its owner. The owner must be said because the default,
 * root, is the seed's issue 225: a secret written root's, 0600, that the module's own account
 * cannot read, which showed only as a line repeated in a log for hours. Checked on the file as
 * written, before defaults are applied, since after them "root" by default and by choice look alike.
 */
export function refuseSecretFileMistakes(module: string, rawResources: unknown): void {
  if (!Array.isArray(rawResources)) return;
  for (const resource of rawResources as unknown[]) {
    if (!isRecord(resource) || resource.shape !== 'file' || !isRecord(resource.content)) continue;
    const path = typeof resource.path === 'string' ? resource.path : '(a file)';
    if ('sealed' in resource.content) throw new ModuleCarriesSealedBox(module, path);
    if ('secret' in resource.content && resource.owner === undefined) throw new SecretFileOwnerUnsaid(module, path);
  }
}

/** Refuses a module revision (as registered, defaults applied) whose files carry sealed boxes. */
export function refuseSealedBoxes(module: string, resources: readonly Resource[]): void {
  for (const resource of resources) {
    if (resource.shape === 'file' && 'sealed' in resource.content) throw new ModuleCarriesSealedBox(module, resource.path);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `node declare` given a file naming a secret or carrying a box: secrets belong to modules. */
export class DeclaredSecretOutsideModule extends OperatorError {
  constructor(node: string, path: string) {
    super(`the file ${path} declared for node ${node} names a secret, and secrets are kept per module; nothing was declared`, {
      next: 'put the file in a module (mesh-control module add), set the secret with mesh-control secret set MODULE NAME, and assign the module to the node',
    });
  }
}

/** Refuses `node declare` resources whose files name a secret or carry a sealed box. */
export function refuseDeclaredSecrets(node: string, resources: readonly Resource[]): void {
  for (const resource of resources) {
    if (resource.shape === 'file' && ('secret' in resource.content || 'sealed' in resource.content)) throw new DeclaredSecretOutsideModule(node, resource.path);
  }
}
