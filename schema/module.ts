import * as z from 'zod';
import { ProvisionNeeds, ProvisionOffers } from './provision';
import { ResourceList } from './resource';
import { ModuleSeats } from './seat';

// A module is a named, versioned set of resources that the controller places on nodes
// (`mesh-control assign NODE MODULE…`). It is registered from `module.json` (`mesh-control module
// add PATH`); every later registration of the same name must carry a higher version, and how
// that new revision reaches the nodes already running the module is its upgrade policy.

/** A module's name: one DNS label, like a node's, so it reads the same in every listing. */
export const ModuleName = z
  .string()
  .regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, { error: 'expected a module name: lowercase letters, digits and "-", like "web-frontend"' });
/** See {@link ModuleName}. */
export type ModuleName = z.infer<typeof ModuleName>;

/**
 * A module's version: one to four dot-separated whole numbers (`3`, `1.4`, `2.0.17`), compared
 * number by number ({@link compareModuleVersions}). No pre-release tags: a revision the mesh may
 * roll out is a release, and "higher" must never need a rule book.
 */
export const ModuleVersion = z
  .string()
  .regex(/^(0|[1-9][0-9]{0,8})(\.(0|[1-9][0-9]{0,8})){0,3}$/, { error: 'expected a version of one to four whole numbers like "1.4.2", without leading zeros' });
/** See {@link ModuleVersion}. */
export type ModuleVersion = z.infer<typeof ModuleVersion>;

/**
 * How a new revision reaches the nodes running an older one:
 * - `one-first` (the default): the first machine by name among those heard from lately is
 *   sent it; the others follow only once that machine's report on it says it applied;
 * - `together`: every node is sent it at once;
 * - `record`: it is registered and held; a node gets it only when a push names it
 *   (`mesh-control push NODE`) or pushes the whole mesh (`mesh-control push`).
 */
export const UpgradePolicy = z.enum(['one-first', 'together', 'record']);
/** See {@link UpgradePolicy}. */
export type UpgradePolicy = z.infer<typeof UpgradePolicy>;

/** `module.json`: the module's name, version, upgrade policy, resources (defaults applied) and the seats it holds and needs. */
export const ModuleManifest = z.strictObject({
  name: ModuleName,
  version: ModuleVersion,
  upgrade_policy: UpgradePolicy.default('one-first'),
  resources: ResourceList,
  // The seats it holds and needs (schema/seat.ts); left out, none.
  seats: ModuleSeats.optional(),
  /** Provisions it offers the mesh (schema/provision.ts); left out, none. */
  provides: ProvisionOffers.optional(),
  /** Provisions it needs from a provider on the mesh; left out, none. */
  consumes: ProvisionNeeds.optional(),
});
/** See {@link ModuleManifest}. */
export type ModuleManifest = z.infer<typeof ModuleManifest>;

/**
 * Orders two module versions number by number, a missing number counting as 0 (`1.2` equals
 * `1.2.0`): negative when `a` is lower, 0 when equal, positive when higher.
 */
export function compareModuleVersions(a: ModuleVersion, b: ModuleVersion): number {
  const left = a.split('.').map(Number);
  const right = b.split('.').map(Number);
  for (let i = 0; i < Math.max(left.length, right.length); i += 1) {
    const difference = (left[i] ?? 0) - (right[i] ?? 0);
    if (difference !== 0) return difference < 0 ? -1 : 1;
  }
  return 0;
}
