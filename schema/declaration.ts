import * as z from 'zod';
import { BrokerFingerprints } from './broker-fingerprints';
import { BrokerUrls } from './broker-urls';
import { Overlay } from './overlay';
import { Owned } from './owned';
import { Count, IsoTime, NodeName } from './primitives';
import { ResourceList } from './resource';
import { SeatRoster } from './seat';

/**
 * What a declaration is for. `overlay` makes a new node reachable and carries nothing else;
 * `full` is everything the node should hold; `final` names nothing, so the host removes what it
 * owns, reports, and drops its identity.
 */
export const DeclarationKind = z.enum(['overlay', 'full', 'final']);
/** See {@link DeclarationKind}. */
export type DeclarationKind = z.infer<typeof DeclarationKind>;

const OVERLAY_SHAPES = new Set(['file', 'directory', 'service']);

/**
 * The payload the controller composes and signs for one node; the host verifies the signature
 * on every one, then applies it. `epoch` is the controller lease epoch it was sent under
 * (fencing: the host refuses one older than the highest it has seen); `generation` increases
 * per node, so an older declaration arriving late is refused. `previously_owned` is the
 * controller's copy of what the node last reported owning, sent only when the node rebuilds a
 * lost store. `broker_fingerprints`, when present, are the broker certificates the node pins
 * from now on (the current, and the next while it is rotated): a pin reaches a node only signed.
 * `broker_urls`, when present, are every server of the broker's cluster, which the node's link
 * tries in turn from now on. `roster`, when present (a full declaration on a mesh with a replicated
 * seat held), gives each replicated seat's holders, this node first.
 */
export const Declaration = z
  .strictObject({
    node: NodeName,
    epoch: Count,
    generation: z.int().min(1, { error: 'generations start at 1' }),
    kind: DeclarationKind,
    issued_at: IsoTime,
    resources: ResourceList,
    overlay: Overlay.optional(),
    previously_owned: Owned.optional(),
    broker_fingerprints: BrokerFingerprints.optional(),
    broker_urls: BrokerUrls.optional(),
    roster: SeatRoster.optional(),
  })
  .superRefine((declaration, ctx) => {
    const refuse = (path: string, message: string) =>
      ctx.addIssue({ code: 'custom', path: [path], message, input: declaration[path as keyof typeof declaration] });
    if (declaration.kind === 'overlay' && declaration.overlay === undefined) {
      refuse('overlay', 'required: an overlay declaration carries the overlay');
    }
    // The first declaration is the overlay and nothing else: a node is made reachable before
    // it is made useful, so a bad resource cannot leave it broken and unreachable at once. The
    // overlay is written as ordinary files, directories and services; nothing else rides along.
    if (declaration.kind === 'overlay') {
      declaration.resources.forEach((resource, index) => {
        if (!OVERLAY_SHAPES.has(resource.shape)) {
          ctx.addIssue({
            code: 'custom',
            path: ['resources', index, 'shape'],
            message: `an overlay declaration carries only the overlay's files, directories and services, not a ${resource.shape}; send it in a full declaration`,
            input: resource.shape,
          });
        }
      });
    }
    if (declaration.kind === 'final' && declaration.resources.length > 0) {
      refuse('resources', 'a final declaration names nothing: resources must be []');
    }
    if (declaration.kind === 'final' && declaration.overlay !== undefined) {
      refuse('overlay', 'a final declaration names nothing: leave the overlay out');
    }
  });
/** See {@link Declaration}. */
export type Declaration = z.infer<typeof Declaration>;
