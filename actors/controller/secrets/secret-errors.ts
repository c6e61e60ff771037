import { MAX_SECRET_BYTES } from '../../../schema/secret';
import { bytesText } from '../../../schema/bounds';
import { OperatorError } from '../../shared/operator-error';

// Errors about secrets never carry a value: only the module, the name and sizes.

/** `secret set` was given nothing to keep. */
export class SecretValueEmpty extends OperatorError {
  constructor(module: string, name: string) {
    super(`the value given for secret ${module}/${name} is empty; nothing was kept`, {
      next: `give the value on standard input (printf %s "$VALUE" | mesh-control secret set ${module} ${name}) or with --from-file FILE`,
    });
  }
}

/** `secret set` was given more than a secret may hold. */
export class SecretValueTooLarge extends OperatorError {
  constructor(module: string, name: string, bytes: number) {
    super(`the value given for secret ${module}/${name} is ${bytesText(bytes)}, over the ${bytesText(MAX_SECRET_BYTES)} a secret may hold; nothing was kept`, {
      next: 'ship a file that large in a package, and keep only the key or password that unlocks it as a secret',
    });
  }
}

/** A secret named by a verb, or by a module's file, is not set. */
export class SecretNotSet extends OperatorError {
  constructor(module: string, name: string, forWhat?: string) {
    super(`the secret ${module}/${name} is not set${forWhat === undefined ? '' : `, and ${forWhat} names it`}; nothing was sent`, {
      next: `set it with: mesh-control secret set ${module} ${name} --from-file FILE (or its value on standard input)`,
    });
  }
}

/** Secrets are kept in the store, but the store key that encrypts them is missing or another. */
export class SecretStoreKeyUnusable extends OperatorError {
  constructor(file: string, problem: string) {
    super(`the secrets in the store cannot be read with the store key ${file}: ${problem}; nothing was changed`, {
      next: `put back the ${file} this mesh was using (from the backup of the mesh directory); without it, unset every secret (mesh-control secret list, then secret unset MODULE NAME) and set each again`,
    });
  }
}

/**
 * A node's declaration names secrets, and the node has no live key to seal them to: its key
 * died (a token was issued for it, or it was revoked) and it has not enrolled again.
 */
export class NodeKeyDead extends OperatorError {
  readonly node: string;
  readonly items: string[];
  constructor(node: string, items: string[]) {
    super(`node ${node} has no live key, so the mesh can no longer seal to it: ${items.join(', ')}; nothing was sent to it`, {
      next: `enrol it again (mesh-control token issue --node ${node}, then nox-mesh-host enrol --token … on the machine); it is sent its secrets sealed to the new key`,
    });
    this.node = node;
    this.items = items;
  }
}

/** A value did not reach the controller as base64 (a caller other than `mesh-control secret set`). */
export class SecretValueUnreadable extends OperatorError {
  constructor(module: string, name: string) {
    super(`the value sent for secret ${module}/${name} is not base64; nothing was kept`, {
      next: 'set it with mesh-control secret set, which sends the value as it should be sent',
    });
  }
}

/** `secret unset` of a secret a module running on some node still names. */
export class SecretStillNamed extends OperatorError {
  constructor(module: string, name: string, users: readonly string[]) {
    super(`the secret ${module}/${name} is named by ${users.join(', ')}; nothing was unset`, {
      next: `take the file out of module ${module} (a new version: mesh-control module add) or unassign it (mesh-control unassign NODE ${module}), then unset the secret`,
    });
  }
}
