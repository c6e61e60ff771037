import * as z from 'zod';
import type { ControllerPart } from '../serve/controller-parts';
import { checkHandAct, HandActArgs } from '../hand-acts/hand-act-args';
import { keepHandAct } from '../hand-acts/record-hand-act';
import { providerStandings, type ProviderStanding } from './provider-standing';
import { allCredentials, allRetiringCredentials } from './provisions.repo';
import { RotateArgs, rotatedText, rotateProvision } from './rotate-provision';

/** The arguments of the `rotate` verb: RotateArgs, and why (required: a rotation is a hand act). */
export const RotateVerbArgs = RotateArgs.extend(HandActArgs);
/** The arguments of `provisions`: none. */
export const ProvisionsArgs = z.strictObject({});

/** One issued credential as `provisions` lists it: names, versions and when, never a value. */
export interface CredentialListed {
  provision: string;
  node: string;
  module: string;
  provider_node: string;
  provider_module: string;
  version: number;
  issued_at: string;
  /**
   * Older versions a rotation replaced that its provider still accepts, until the consumer
   * reports the new one applied; empty once it has.
   */
  still_accepted: number[];
}

/** What `provisions` answers. */
export interface ProvisionsListing {
  providers: ProviderStanding[];
  credentials: CredentialListed[];
}

/** Provisions: `rotate` (a hand act) and `provisions` (providers, their standing, and what is issued). */
export const provisionsPart: ControllerPart = {
  name: 'provisions',
  start: async (_ctx, verbs) => {
    verbs.register('rotate', RotateVerbArgs, async (ctx, { why, condition, ...args }) => {
      const example = `mesh-control rotate ${args.provision}${args.consumer === undefined ? '' : ` --consumer ${args.consumer}`}${args.module === undefined ? '' : ` --module ${args.module}`} --why "its credential leaked in a log"`;
      const reason = checkHandAct('rotate', { why, condition }, { example });
      const outcome = await rotateProvision(ctx, args);
      const subject = [args.provision, args.consumer === undefined ? undefined : `consumer ${args.consumer}`, args.module === undefined ? undefined : `module ${args.module}`].filter((part) => part !== undefined).join(' ');
      const unkept = await keepHandAct(ctx, { verb: 'rotate', subject, ...reason });
      return { result: outcome, text: unkept === null ? rotatedText(outcome) : `${rotatedText(outcome)}\n${unkept}` };
    });
    verbs.register('provisions', ProvisionsArgs, async (ctx) => {
      const retiring = await allRetiringCredentials(ctx.store);
      const listing: ProvisionsListing = {
        providers: await providerStandings(ctx.store),
        credentials: (await allCredentials(ctx.store)).map((row) => ({
          provision: row.provision,
          node: row.node,
          module: row.module,
          provider_node: row.provider_node,
          provider_module: row.provider_module,
          version: row.version,
          issued_at: new Date(row.issued_at).toISOString(),
          still_accepted: retiring.filter((old) => old.provision === row.provision && old.node === row.node && old.module === row.module && old.version < row.version).map((old) => old.version),
        })),
      };
      return { result: listing, text: provisionsText(listing) };
    }, { query: true });
    return { stop: async () => undefined };
  },
};

/** What `provisions` says: each provider and how it stands, then each credential issued. */
export function provisionsText(listing: ProvisionsListing): string {
  if (listing.providers.length === 0 && listing.credentials.length === 0) {
    return 'no node provides or consumes a provision; a module offers one with "provides" in its module.json (mesh-control module add PATH)';
  }
  const lines = ['providers:'];
  for (const p of listing.providers) {
    lines.push(`  ${p.provision}: ${p.module} on ${p.node}, ${p.standing}${p.standing === 'failing' ? ` (${p.failed.join('; ')})` : ''}; consumers: ${p.consumers.length === 0 ? 'none' : p.consumers.join(', ')}`);
  }
  if (listing.providers.length === 0) lines.push('  none on the mesh');
  lines.push('credentials issued:');
  for (const c of listing.credentials) lines.push(`  ${c.provision}: ${c.module} on ${c.node}, version ${c.version}, issued ${c.issued_at}, accepted by ${c.provider_module} on ${c.provider_node}${c.still_accepted.length === 0 ? '' : `, with version ${c.still_accepted.join(', ')} until ${c.node} reports the new one applied`}`);
  if (listing.credentials.length === 0) lines.push('  none');
  return lines.join('\n');
}
