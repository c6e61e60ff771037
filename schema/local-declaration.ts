import * as z from 'zod';
import { ResourceList } from './resource';

/**
 * A declaration a person applies by hand at the machine (`nox-mesh-host apply FILE`): just the
 * resources, unsigned, because whoever can write this file and run the host as root can already
 * do anything the host can. Every shape is allowed, actions included (seed: "Rescue").
 */
export const LocalDeclaration = z.strictObject({
  resources: ResourceList,
});
/** See {@link LocalDeclaration}. */
export type LocalDeclaration = z.infer<typeof LocalDeclaration>;
