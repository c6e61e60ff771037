import * as z from 'zod';
import { ModuleName } from '../../../schema/module';
import { SecretName } from '../../../schema/secret';
import type { ControllerPart } from '../serve/controller-parts';
import { listSecrets, setSecret, unsetSecret, type SecretChanged, type SecretListed } from './keep-secret';
import { SecretValueUnreadable } from './secret-errors';
import { sendSecretUsers } from './send-secret-users';
import type { NodeTold } from '../provisions/provision-links';

/**
 * The arguments of `secret.set`. The value travels base64 in `value_base64`, checked only as a
 * string here: a refused argument is quoted back (ArgumentInvalid), and this one must never be.
 */
export const SecretSetArgs = z.strictObject({ module: ModuleName, name: SecretName, value_base64: z.string() });
/** The arguments of `secret.unset`. */
export const SecretUnsetArgs = z.strictObject({ module: ModuleName, name: SecretName });
/** The arguments of `secret.list`. */
export const SecretListArgs = z.strictObject({ module: ModuleName.optional() });

/** Secrets: `secret.set`, `secret.unset` and `secret.list` (which only reads). */
export const secretsPart: ControllerPart = {
  name: 'secrets',
  start: async (_ctx, verbs) => {
    verbs.register('secret.set', SecretSetArgs, async (callCtx, args) => {
      const value = decodeValue(args.value_base64, args.module, args.name);
      try {
        const changed = await setSecret(callCtx, args.module, args.name, value);
        // The nodes that hold it are sent the new version now (not at their next push).
        const sent = await sendSecretUsers(callCtx, args.module, args.name);
        return { result: { ...changed, sent }, text: secretChangedText(changed, sent) };
      } finally {
        value.fill(0);
      }
    });
    verbs.register('secret.unset', SecretUnsetArgs, async (callCtx, args) => {
      const changed = await unsetSecret(callCtx, args.module, args.name);
      return { result: changed, text: secretChangedText(changed) };
    });
    verbs.register('secret.list', SecretListArgs, async (callCtx, args) => {
      const secrets = await listSecrets(callCtx, args.module);
      return { result: { secrets }, text: secretListText(secrets, args.module) };
    }, { query: true });
    return { stop: async () => undefined };
  },
};

function decodeValue(text: string, module: string, name: string): Buffer {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) throw new SecretValueUnreadable(module, name);
  return Buffer.from(text, 'base64');
}

/** What `secret set` and `secret unset` say. */
export function secretChangedText(changed: SecretChanged, sent?: readonly NodeTold[]): string {
  const id = `${changed.module}/${changed.name}`;
  if (changed.version !== null) {
    const lines = [`secret ${id} set: version ${changed.version}, ${changed.bytes} bytes, kept encrypted`];
    if (sent === undefined || sent.length === 0) {
      lines.push(`no node runs a revision of ${changed.module} naming it; a node assigned ${changed.module} gets it sealed to its own key`);
    }
    for (const told of sent ?? []) {
      lines.push(told.generation === null ? `node ${told.node}: not sent yet (${told.held ?? 'no reason given'}); it gets it with its next declaration` : `node ${told.node}: sent it sealed to its key, generation ${told.generation}`);
    }
    return lines.join('\n');
  }
  if (!changed.changed) return `secret ${id} was not set; nothing changed`;
  return `secret ${id} unset; a node keeps the file until its next declaration, which a module still naming it cannot be sent without it`;
}

/** What `secret list` says: one line per secret, never a value. */
export function secretListText(secrets: readonly SecretListed[], module: string | undefined): string {
  if (secrets.length === 0) {
    return module === undefined ? 'no secret is set; set one with: mesh-control secret set MODULE NAME --from-file FILE' : `module ${module} has no secret set`;
  }
  const lines = secrets.map((secret) => `${secret.module}/${secret.name}  version ${secret.version}  ${secret.bytes} bytes  set ${secret.set_at}`);
  const dead = secrets.flatMap((secret) => secret.cannot_seal_to.map((item) => ({ secret, item })));
  if (dead.length > 0) {
    lines.push('', 'The mesh can no longer seal to these, until each node enrols again (mesh-control token issue --node NODE):');
    for (const { secret, item } of dead) {
      lines.push(`  ${item.node}: ${secret.module}/${secret.name} version ${item.version} for ${item.path} (its key ${item.reason === 'revoked' ? 'was revoked' : 'was replaced'} ${item.key_died_at})`);
    }
  }
  return lines.join('\n');
}
