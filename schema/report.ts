import * as z from 'zod';
import { Briefing } from './briefing';
import { Owned } from './owned';
import { Count, HostVersion, IsoTime, NodeName, Sha256Hex } from './primitives';
import { refuseDuplicates } from './refuse-duplicates';
import { keyMatchesShape, ResourceKey, ResourceShape } from './resource';

/**
 * What became of one resource: `applied` (changed and read back), `unchanged` (already
 * matched), `failed`, `removed` (file, directory, container no longer declared), `stopped` (a
 * service no longer declared: stopped, its unit file left), `forgotten` (package or action no
 * longer declared: left as it is), `refused` (not the host's to do), `kept` (adoption found the
 * machine's own value and kept it: the conflict is in the briefing), `handed_back` (a file or
 * directory adoption took over, no longer declared: the machine's original, kept since, is put
 * back instead of the path being removed).
 */
export const ResourceOutcome = z.enum(['applied', 'unchanged', 'failed', 'removed', 'stopped', 'forgotten', 'refused', 'kept', 'handed_back']);
/** See {@link ResourceOutcome}. */
export type ResourceOutcome = z.infer<typeof ResourceOutcome>;

/** One resource's result in a report. `output` is an action's captured output, bounded. */
export const ResourceResult = z
  .strictObject({
    key: ResourceKey,
    shape: ResourceShape,
    outcome: ResourceOutcome,
    detail: z.string().max(4096, { error: 'a detail is at most 4096 characters; shorten it before sending' }).optional(),
    output: z.string().max(16384, { error: 'output is at most 16384 characters; keep its tail' }).optional(),
  })
  .superRefine(keyMatchesShape);
/** See {@link ResourceResult}. */
export type ResourceResult = z.infer<typeof ResourceResult>;

/** Why the host refused a whole declaration rather than applying it. */
export const RefusalReason = z.enum([
  'bad_signature', // the signature does not verify
  'foreign_key', // signed, but not by the pinned controller key
  'wrong_node', // addressed to another node
  'stale_epoch', // from a controller epoch older than the highest seen
  'older_generation', // not newer than the generation already applied
  'malformed', // the payload does not match the declaration contract
  'own_unit', // names the host's own unit, which only the package may manage
  'shape_not_supported', // a shape this kind of host does not take
]);
/** See {@link RefusalReason}. */
export type RefusalReason = z.infer<typeof RefusalReason>;

/**
 * The host's account of what it did, sent upward after each apply or reconcile. The controller
 * keeps accounts by `epoch`, then `sequence` (declarations applied), then `report_sequence`
 * (reports sent); an older report is refused and counted. `version_running` is the version of
 * the process sending it, never what a package manager says is installed.
 */
export const Report = z.strictObject({
  node: NodeName,
  epoch: Count,
  sequence: Count,
  report_sequence: Count,
  declaration_digest: Sha256Hex.nullable(),
  generation: Count,
  results: z.array(ResourceResult).superRefine(refuseDuplicates('result for', (result) => result.key, 'key')),
  owned: Owned,
  version_running: HostVersion,
  seconds_since_linked: z.number().min(0, { error: 'must not be negative' }).nullable(),
  refused: z
    .strictObject({
      reason: RefusalReason,
      generation: z.int().min(1).optional(),
      epoch: Count.optional(),
      detail: z.string().max(4096, { error: 'a detail is at most 4096 characters' }).optional(),
    })
    .optional(),
  briefing: Briefing.optional(),
  sent_at: IsoTime,
});
/** See {@link Report}. */
export type Report = z.infer<typeof Report>;
