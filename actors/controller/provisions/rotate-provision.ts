import * as z from 'zod';
import { ModuleName } from '../../../schema/module';
import { NodeName } from '../../../schema/primitives';
import { ProvisionName } from '../../../schema/provision';
import type { ControllerContext } from '../controller-context';
import { issueCredential } from './issue-credential';
import { tellNodes, type NodeTold } from './provision-links';
import { NothingToRotate } from './provision-errors';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { allCredentials, credentialsOf, getCredential, keepRetiringCredential, type CredentialRow } from './provisions.repo';

/** The arguments of `rotate` besides the hand act's: a provision, narrowed to a consumer node and/or module. */
export const RotateArgs = z.strictObject({ provision: ProvisionName, consumer: NodeName.optional(), module: ModuleName.optional() });
/** See {@link RotateArgs}. */
export type RotateArgs = z.infer<typeof RotateArgs>;

/** What a rotation did: which credentials it replaced (names and versions only) and whom it sent. */
export interface Rotated {
  provision: string;
  rotated: Array<{ node: string; module: string; version: number; provider_node: string; provider_module: string }>;
  /** Providers first (they accept the new credentials), then consumers. */
  told: NodeTold[];
}

/**
 * `mesh-control rotate PROVISION [--consumer NODE] [--module MODULE]`: replaces exactly the
 * credentials asked — every consumer's, one machine's, one module's on every machine, or one
 * module's on one machine — and sends only the nodes whose files change: the providers that
 * accept them, then the consumers holding them. Nothing else is composed anew, and a consumer
 * whose credential was not replaced keeps the very box it holds, so its file and its services
 * are left alone. Refused (NothingToRotate) when nothing matches.
 *
 * No outage window: each replaced credential stays accepted by its provider beside the new one
 * (provision_retiring_credentials) until a report of the consumer shows the new one applied
 * (retireConfirmedCredentials), and only then is the provider sent the list without it.
 */
export async function rotateProvision(ctx: ControllerContext, args: RotateArgs): Promise<Rotated> {
  const rows = await credentialsOf(ctx.store, args.provision, { ...(args.consumer === undefined ? {} : { node: args.consumer }), ...(args.module === undefined ? {} : { module: args.module }) });
  if (rows.length === 0) {
    const issued = (await allCredentials(ctx.store)).map((row) => `${row.provision}: ${row.module} on ${row.node}`);
    throw new NothingToRotate(args.provision, { node: args.consumer, module: args.module }, issued);
  }
  const rotated: Rotated['rotated'] = [];
  for (const row of rows) {
    const next = await replaceKeepingOld(ctx, row);
    rotated.push({ node: next.node, module: next.module, version: next.version, provider_node: next.provider_node, provider_module: next.provider_module });
  }
  const providers = [...new Set(rotated.map((row) => row.provider_node))];
  const consumers = [...new Set(rotated.map((row) => row.node))].filter((node) => !providers.includes(node));
  ctx.log(`provision ${args.provision}: rotated ${rotated.length} credential(s)`, { level: 'info', provision: args.provision, rotated: rotated.map((row) => `${row.module}@${row.node}`).join(',') });
  return { provision: args.provision, rotated, told: await tellNodes(ctx, [...providers, ...consumers]) };
}

/**
 * Replaces one consumer's credential, keeping the one it holds as still accepted. Done in the
 * consumer node's work queue, where its declarations are composed and sent: the node's last
 * generation read here is one no declaration carrying the new credential can have, and every
 * later one carries it.
 */
async function replaceKeepingOld(ctx: ControllerContext, row: CredentialRow): Promise<CredentialRow> {
  return nodeWorkQueue(ctx).run(row.node, async () => {
    const held = (await getCredential(ctx.store, row.provision, row.node, row.module)) ?? row;
    const [node] = await ctx.store.query<{ declaration_generation: number }>('SELECT declaration_generation FROM nodes WHERE name = $1', [row.node]);
    await keepRetiringCredential(ctx.store, held, Number(node?.declaration_generation ?? 0), ctx.now());
    return issueCredential(ctx, held, { node: held.provider_node, module: held.provider_module }, true);
  });
}

/** What `rotate` says. */
export function rotatedText(outcome: Rotated): string {
  const lines = [`provision ${outcome.provision}: ${outcome.rotated.length} credential(s) replaced`];
  for (const row of outcome.rotated) lines.push(`  ${row.module} on ${row.node}: version ${row.version} (accepted by ${row.provider_module} on ${row.provider_node})`);
  for (const told of outcome.told) {
    lines.push(told.generation === null ? `node ${told.node}: not sent yet: ${told.held ?? 'no reason given'}; it gets the new credential with its next declaration` : `node ${told.node}: sent generation ${told.generation}`);
  }
  lines.push('the old credentials stay accepted until each consumer reports the new one applied; its provider is then sent the list without them');
  lines.push('only services declaring the changed file in restart_on are restarted; check them with: mesh-control status');
  return lines.join('\n');
}
