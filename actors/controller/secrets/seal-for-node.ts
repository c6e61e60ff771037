import type { Resource } from '../../../schema/resource';
import { sealToNode } from '../../shared/crypto/seal';
import { ready } from '../../shared/crypto/sodium';
import type { ControllerContext } from '../controller-context';
import { secretValue } from './keep-secret';
import { NodeKeyDead, SecretNotSet } from './secret-errors';
import { forgetStaleSeals, getSecret, sealsOfNode, upsertSeal } from './secrets.repo';

/** One module's resources on a node, as composition gathers them. */
export interface ModuleResources {
  module: string;
  resources: Resource[];
}

/**
 * Puts, in place of every `{"secret": NAME}` file content of `node`'s modules, that module's
 * secret sealed to the node's live key (`{"sealed": {secret, version, box}}`). A box already
 * sealed for that file, at that version, to that key is used again, so composing twice gives
 * the same declaration (a sealed box is random each time). Refused whole: a node with no live
 * key (NodeKeyDead, every item named), a secret not set (SecretNotSet). Nothing is sealed to a
 * key recorded dead. The values are decrypted in memory only, one at a time.
 */
export async function sealModuleSecrets(ctx: Pick<ControllerContext, 'store' | 'config'>, node: string, modules: readonly ModuleResources[]): Promise<Resource[][]> {
  const wanted = secretFilesOf(modules);
  if (wanted.length === 0) {
    if ((await sealsOfNode(ctx.store, node)).length > 0 && (await liveKeyOf(ctx, node)) !== undefined) await forgetStaleSeals(ctx.store, node, new Set());
    return modules.map(({ resources }) => resources);
  }
  const key = await liveKeyOf(ctx, node);
  if (key === undefined) throw new NodeKeyDead(node, wanted.map((item) => `${item.module}/${item.name} for ${item.path}`));
  const kept = new Map((await sealsOfNode(ctx.store, node)).map((seal) => [`${seal.module}/${seal.name}/${seal.path}`, seal]));
  let sodiumLoaded = false;
  const sealedModules: Resource[][] = [];
  for (const { module, resources } of modules) {
    const sealed: Resource[] = [];
    for (const resource of resources) {
      if (resource.shape !== 'file' || !('secret' in resource.content)) {
        sealed.push(resource);
        continue;
      }
      const name = resource.content.secret;
      const { row, value } = await secretValue(ctx, module, name, `module ${module}'s file ${resource.path}`);
      const previous = kept.get(`${module}/${name}/${resource.path}`);
      let box: string;
      if (previous !== undefined && Number(previous.version) === row.version && previous.public_key === key) {
        box = previous.box;
      } else {
        // libsodium is loaded on the first box sealed: a controller with no secret never loads it.
        if (!sodiumLoaded) {
          await ready();
          sodiumLoaded = true;
        }
        box = sealToNode(value, key);
        await upsertSeal(ctx.store, { node, module, name, version: row.version, public_key: key, box, path: resource.path });
      }
      value.fill(0);
      sealed.push({ ...resource, content: { sealed: { secret: `${module}/${name}`, version: row.version, box } } });
    }
    sealedModules.push(sealed);
  }
  await forgetStaleSeals(ctx.store, node, new Set(wanted.map((item) => `${item.module}/${item.name}/${item.path}`)));
  return sealedModules;
}

/**
 * Refuses, before anything is recorded, modules whose files name a secret that is not set, or a
 * node with no live key to seal them to: what sealModuleSecrets would refuse at the send.
 */
export async function refuseUnsealable(ctx: Pick<ControllerContext, 'store'>, node: string, modules: readonly ModuleResources[]): Promise<void> {
  const wanted = secretFilesOf(modules);
  if (wanted.length === 0) return;
  if ((await liveKeyOf(ctx, node)) === undefined) throw new NodeKeyDead(node, wanted.map((item) => `${item.module}/${item.name} for ${item.path}`));
  await refuseUnsetSecrets(ctx, modules);
}

/** Refuses modules whose files name a secret that is not set (SecretNotSet, naming the file). */
export async function refuseUnsetSecrets(ctx: Pick<ControllerContext, 'store'>, modules: readonly ModuleResources[]): Promise<void> {
  for (const item of secretFilesOf(modules)) {
    if ((await getSecret(ctx.store, item.module, item.name)) === undefined) throw new SecretNotSet(item.module, item.name, `module ${item.module}'s file ${item.path}`);
  }
}

function secretFilesOf(modules: readonly ModuleResources[]): Array<{ module: string; name: string; path: string }> {
  return modules.flatMap(({ module, resources }) =>
    resources.flatMap((resource) => (resource.shape === 'file' && 'secret' in resource.content ? [{ module, name: resource.content.secret, path: resource.path }] : [])),
  );
}

/** The node's Ed25519 key when it holds one that is not recorded dead; undefined otherwise. */
export async function liveKeyOf(ctx: Pick<ControllerContext, 'store'>, node: string): Promise<string | undefined> {
  const [row] = await ctx.store.query<{ public_key: string | null; dead: boolean }>(
    'SELECT n.public_key, EXISTS (SELECT 1 FROM dead_node_keys d WHERE d.public_key = n.public_key) AS dead FROM nodes n WHERE n.name = $1',
    [node],
  );
  if (row === undefined || row.public_key === null || row.dead) return undefined;
  return row.public_key;
}
