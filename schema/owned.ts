import * as z from 'zod';
import { AbsolutePath, IsoTime, Sha256Hex } from './primitives';
import { refuseDuplicates } from './refuse-duplicates';
import { keyMatchesShape, ResourceKey, ResourceShape } from './resource';

/**
 * One thing the host owns: recorded by the host *after* applying it worked, so a host that dies
 * mid-apply never claims what it did not finish. `adopted` marks what adoption took over from
 * the machine; `original_kept_at` is where the machine's own copy was kept before writing.
 */
export const OwnedResource = z
  .strictObject({
    key: ResourceKey,
    shape: ResourceShape,
    digest: Sha256Hex,
    recorded_at: IsoTime,
    adopted: z.boolean().optional(),
    original_kept_at: AbsolutePath.optional(),
  })
  .superRefine(keyMatchesShape);
/** See {@link OwnedResource}. */
export type OwnedResource = z.infer<typeof OwnedResource>;

/**
 * What the host owns, one entry per resource key. The host writes it into its store and into
 * every report; the controller keeps the last copy and hands it back only when a host rebuilds
 * a lost store, so removal of what is no longer declared still works.
 */
export const Owned = z.strictObject({
  resources: z.array(OwnedResource).superRefine(refuseDuplicates('resource key', (owned) => owned.key, 'key')),
});
/** See {@link Owned}. */
export type Owned = z.infer<typeof Owned>;
