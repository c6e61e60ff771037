import { createHash } from 'node:crypto';
import type { FileResource } from '../../../schema/resource';
import { MAX_SECRET_BYTES } from '../../../schema/secret';
import { sealToNode } from '../../shared/crypto/seal';
import { ready } from '../../shared/crypto/sodium';
import type { ControllerContext } from '../controller-context';
import { assignmentsOf } from '../modules/modules.repo';
import { NodeKeyDead } from '../secrets/secret-errors';
import { liveKeyOf } from '../secrets/seal-for-node';
import { credentialValue, issueCredential } from './issue-credential';
import { AcceptedListTooLarge, ProvisionUnprovided } from './provision-errors';
import {
  credentialsAcceptedBy,
  forgetProvisionSeals,
  getCredential,
  getProvisionSeal,
  modulesOffering,
  providersOf,
  retiringCredentialsOf,
  revisionProvisions,
  upsertCredential,
  upsertProvisionSeal,
  type CredentialRow,
} from './provisions.repo';

/** What composing needs: the store, the mesh's configuration (the store key), and a clock when there is one. */
export type ComposeContext = Pick<ControllerContext, 'store' | 'config'> & { now?: () => Date };

/** A credential file to seal for a node: where, how, what it carries (versions) and its bytes. */
interface CredentialFile {
  module: string;
  file: Pick<FileResource, 'path' | 'owner' | 'group' | 'mode'>;
  /** `module/provision.NAME` or `module/accepts.NAME`, as the sealed content names it. */
  label: string;
  version: number;
  /** What was sealed, by versions only: the same means the kept box still holds it. */
  sealedFor: string;
  bytes: () => Promise<Buffer>;
}

/**
 * The credential files `node` holds for the modules it runs, by module: for each module that
 * consumes a provision, the credential issued to it on this node (issued now when it holds none,
 * from the first provider on the mesh; ProvisionUnprovided when there is none); for each module
 * that provides one, the credentials it must accept, one `NODE MODULE CREDENTIAL` line per
 * consumer still consuming it. Each is sealed to the node's live key (NodeKeyDead when it has
 * none), a kept box used again while what it holds is unchanged, so composing twice gives the
 * same declaration, and a rotation changes only the files whose credentials it replaced.
 */
export async function provisionFilesOf(ctx: ComposeContext, node: string): Promise<Map<string, FileResource[]>> {
  const wanted: CredentialFile[] = [];
  const assignments = await assignmentsOf(ctx.store, node);
  // Consumers first: a credential issued now to a module of this node is in the list its
  // provider on this same node is sealed below, whichever module comes first by name.
  for (const assignment of assignments) {
    const { consumes } = await revisionProvisions(ctx.store, assignment.module, assignment.version);
    for (const need of consumes) {
      const row = await credentialFor(ctx, node, assignment.module, need.provision);
      wanted.push({
        module: assignment.module,
        file: need,
        label: `${assignment.module}/provision.${need.provision}`,
        version: row.version,
        sealedFor: `${need.provision} ${row.provider_node} ${row.provider_module} ${row.version}`,
        bytes: () => credentialValue(ctx, row),
      });
    }
  }
  for (const assignment of assignments) {
    const { provides } = await revisionProvisions(ctx.store, assignment.module, assignment.version);
    for (const offer of provides) {
      const accepted = await withRetiring(ctx, await stillConsuming(ctx, await credentialsAcceptedBy(ctx.store, offer.provision, node, assignment.module)));
      wanted.push({
        module: assignment.module,
        file: offer,
        label: `${assignment.module}/accepts.${offer.provision}`,
        version: 1 + accepted.reduce((sum, row) => sum + row.version, 0),
        sealedFor: digest(accepted.map((row) => `${row.node} ${row.module} ${row.version}`).join('\n')),
        bytes: () => acceptedList(ctx, accepted, { node, module: assignment.module, provision: offer.provision }),
      });
    }
  }
  const byModule = new Map<string, FileResource[]>();
  if (wanted.length > 0) {
    const key = await liveKeyOf(ctx, node);
    if (key === undefined) throw new NodeKeyDead(node, wanted.map((item) => `${item.label} for ${item.file.path}`));
    for (const item of wanted) {
      const list = byModule.get(item.module) ?? [];
      list.push(await sealed(ctx, node, key, item));
      byModule.set(item.module, list);
    }
  }
  await forgetProvisionSeals(ctx.store, node, new Set(wanted.map((item) => item.file.path)));
  return byModule;
}

/**
 * The credential of a consumer, issued now when it holds none. One whose provider of record no
 * longer provides is pointed at the provider there is now (same value: the new provider's list
 * takes it with its next declaration).
 */
async function credentialFor(ctx: ComposeContext, node: string, module: string, provision: string): Promise<CredentialRow> {
  const providers = await providersOf(ctx.store, provision);
  const held = await getCredential(ctx.store, provision, node, module);
  if (held !== undefined && providers.some((p) => p.node === held.provider_node && p.module === held.provider_module)) return held;
  const provider = providers[0];
  if (provider === undefined) {
    if (held !== undefined) return held;
    throw new ProvisionUnprovided(node, module, provision, await modulesOffering(ctx.store, provision), 'nothing was sent');
  }
  if (held !== undefined) {
    const moved = { ...held, provider_node: provider.node, provider_module: provider.module };
    await upsertCredential(ctx.store, moved);
    return moved;
  }
  return issueCredential({ ...ctx, now: ctx.now ?? (() => new Date()) }, { provision, node, module }, provider);
}

/** The rows whose consumer still runs a revision consuming the provision. */
async function stillConsuming(ctx: Pick<ControllerContext, 'store'>, rows: readonly CredentialRow[]): Promise<CredentialRow[]> {
  const kept: CredentialRow[] = [];
  for (const row of rows) {
    const assignment = (await assignmentsOf(ctx.store, row.node)).find((a) => a.module === row.module);
    if (assignment === undefined) continue;
    const { consumes } = await revisionProvisions(ctx.store, row.module, assignment.version);
    if (consumes.some((need) => need.provision === row.provision)) kept.push(row);
  }
  return kept;
}

/**
 * Each consumer's credential, preceded by those a rotation replaced that it may still hold
 * (provision_retiring_credentials): the provider accepts both until the consumer reports the
 * new one applied, so a rotation opens no window in which neither works.
 */
async function withRetiring(ctx: Pick<ControllerContext, 'store'>, rows: readonly CredentialRow[]): Promise<AcceptedCredential[]> {
  const accepted: AcceptedCredential[] = [];
  for (const row of rows) {
    for (const old of await retiringCredentialsOf(ctx.store, row.provision, row.node, row.module)) if (old.version < row.version) accepted.push(old);
    accepted.push(row);
  }
  return accepted;
}

/** One line of a provider's list: a consumer's credential, current or still accepted. */
type AcceptedCredential = Pick<CredentialRow, 'provision' | 'node' | 'module' | 'version' | 'ciphertext' | 'key_id'>;

async function acceptedList(ctx: Pick<ControllerContext, 'config'>, rows: readonly AcceptedCredential[], provider: { node: string; module: string; provision: string }): Promise<Buffer> {
  const lines: Buffer[] = [];
  for (const row of rows) {
    const value = await credentialValue(ctx, row);
    lines.push(Buffer.from(`${row.node} ${row.module} `, 'utf8'), value, Buffer.from('\n', 'utf8'));
  }
  const bytes = Buffer.concat(lines);
  for (const line of lines) line.fill(0);
  if (bytes.length > MAX_SECRET_BYTES) {
    bytes.fill(0);
    throw new AcceptedListTooLarge(provider.node, provider.module, provider.provision, rows.length);
  }
  return bytes;
}

async function sealed(ctx: Pick<ControllerContext, 'store'>, node: string, key: string, item: CredentialFile): Promise<FileResource> {
  const kept = await getProvisionSeal(ctx.store, node, item.file.path);
  let box: string;
  if (kept !== undefined && kept.sealed_for === item.sealedFor && kept.public_key === key) {
    box = kept.box;
  } else {
    await ready();
    const value = await item.bytes();
    try {
      box = sealToNode(value, key);
    } finally {
      value.fill(0);
    }
    await upsertProvisionSeal(ctx.store, { node, path: item.file.path, sealed_for: item.sealedFor, public_key: key, box });
  }
  return {
    shape: 'file',
    path: item.file.path,
    owner: item.file.owner,
    group: item.file.group,
    mode: item.file.mode,
    content: { sealed: { secret: item.label, version: item.version, box } },
  };
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
