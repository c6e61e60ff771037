import * as z from 'zod';
import { ResourceList } from './resource';

/**
 * The bundle that raises a mesh's foundation on its first node (seed 000, "hosted → enrolled:
 * the first node"): what `nox-mesh-host bundle` prints and `nox-mesh-host reconcile --bundle
 * FILE` applies. Either the resources that raise it, in order (the controller's package, the
 * mesh made by `mesh-control init`, the broker and the controller as services), with a sentence
 * saying what they raise; or, from a host that cannot be a first node (an episodic one), why
 * not and what to do instead: a file that says so rather than an empty placeholder.
 */
export const FoundationBundle = z.union([
  z.strictObject({
    bundle: z.literal('foundation'),
    about: z.string().min(1).max(1000),
    resources: ResourceList,
  }),
  z.strictObject({
    bundle: z.literal('foundation'),
    refused: z.string().min(1).max(1000),
    next: z.string().min(1).max(1000),
  }),
]);
/** See {@link FoundationBundle}. */
export type FoundationBundle = z.infer<typeof FoundationBundle>;
