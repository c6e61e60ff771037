import * as z from 'zod';
import { AbsolutePath } from './primitives';
import { modeOpensToOthers } from './secret';

// A provision is something one module offers the modules of the mesh (a database, an identity, a
// resolver) and others consume. The controller issues each consumer (one module on one machine)
// a credential of its own, seals it to that machine inside its declaration, and seals to the
// provider the list of credentials it must accept. The values are made by the controller, kept
// only encrypted at rest, and never cross the wire in the clear.

/**
 * A provision's name: one DNS label of at most 40 characters, so that `module/provision.<name>`
 * and `module/accepts.<name>` fit the sealed-content naming (schema/secret.ts SealedContent).
 */
export const ProvisionName = z
  .string()
  .regex(/^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$/, { error: 'expected a provision name: lowercase letters, digits and "-", at most 40, like "app-database"' });
/** See {@link ProvisionName}. */
export type ProvisionName = z.infer<typeof ProvisionName>;

const FileMode = z.string().regex(/^[0-7]{4}$/, { error: 'expected an octal mode like "0600"' });
const Account = z
  .string()
  .regex(/^(?:[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?|[0-9]{1,10})$/, { error: 'expected a user or group name, or a numeric id' });

// Both ends are files holding credentials: the owner is required (a root-owned 0600 file is one
// the module's own account cannot read, the seed's issue 225), and a mode open to every account
// is refused, as for a secret.
const CredentialFile = {
  path: AbsolutePath.refine((path) => path !== '/', { error: 'the root directory cannot be a credential file' }),
  owner: Account,
  group: Account.default('root'),
  mode: FileMode.default('0600').refine((mode) => !modeOpensToOthers(mode), { error: 'a credential file must not be open to every account; use "0600" or "0640"' }),
};

/**
 * What a module offers in `module.json` `provides`: the provision, and where its host writes the
 * credentials it must accept, one line per consumer (`NODE MODULE CREDENTIAL`).
 */
export const ProvisionOffer = z.strictObject({ provision: ProvisionName, ...CredentialFile });
/** See {@link ProvisionOffer}. */
export type ProvisionOffer = z.infer<typeof ProvisionOffer>;

/**
 * What a module needs in `module.json` `consumes`: the provision, and where its host writes the
 * credential issued to it on that machine (the credential alone, no newline).
 */
export const ProvisionNeed = z.strictObject({ provision: ProvisionName, ...CredentialFile });
/** See {@link ProvisionNeed}. */
export type ProvisionNeed = z.infer<typeof ProvisionNeed>;

/** A module's offers and needs, no provision named twice in either list. */
export const ProvisionOffers = z.array(ProvisionOffer).max(16).refine((list) => new Set(list.map((o) => o.provision)).size === list.length, { error: 'a provision is offered twice' });
/** See {@link ProvisionNeed}. */
export const ProvisionNeeds = z.array(ProvisionNeed).max(16).refine((list) => new Set(list.map((o) => o.provision)).size === list.length, { error: 'a provision is consumed twice' });
