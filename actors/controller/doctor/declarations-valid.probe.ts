import { Declaration } from '../../../schema/declaration';
import { parseContract } from '../../../schema/parse';
import { SHAPES_FOR_HOST_KIND, type HostKind } from '../../../schema/resource';
import { openEnvelopeWithDigest, sealEnvelope } from '../../shared/crypto/envelope';
import { ownUnitRefusal, PACKAGED_HOST_RULES } from '../../shared/host-unit/own-unit';
import { messageOf } from '../../shared/message-of';
import type { ControllerContext } from '../controller-context';
import { composeFull } from '../declarations/compose-full';
import { composeOverlay } from '../declarations/compose-overlay';
import { failed, passed, type DoctorProbe } from './doctor-probe';

/** What the probe composes with: the store, the configuration, the signing key and clock. */
export type ValidatorSources = Pick<ControllerContext, 'store' | 'config' | 'signingKey' | 'now'> & {
  /** The epoch a send would carry now. */
  epoch(): number;
  /** The broker's largest message, when known: a declaration past it could not be sent. */
  maxPayload(): number | undefined;
};

/** How many nodes' declarations are composed side by side, as the read-back looks at them. */
const SIDE_BY_SIDE = 16;

interface Candidate {
  name: string;
  host_kind: HostKind | null;
  overlay_applied_generation: number | null;
  declaration_generation: number | string;
}

/**
 * Every declaration the controller would send now passes the contract the host checks before
 * it stores one: composed per node as sendCurrent would (the overlay until one was applied, the
 * full declaration after) with the next generation and the acting epoch, parsed as the
 * Declaration contract, sealed with the signing key and opened again against the public key
 * every node pins, naming nothing of the host itself (the host's own check, ownUnitRefusal, against a
 * host installed as packaged: the controller does not know a host's settings), its shapes among
 * those the node's kind takes, and within the broker's largest message. Nothing is sent,
 * allotted or recorded.
 */
export function declarationsValidProbe(sources: ValidatorSources): DoctorProbe {
  return {
    name: 'declarations-valid',
    whenCannotRun: 'check that the store answers (the store probe), then run mesh-control doctor again',
    run: async (signal) => {
      const nodes = await sources.store.query<Candidate>(
        `SELECT name, COALESCE(host_kind, profile->>'host_kind') AS host_kind, overlay_applied_generation, declaration_generation
           FROM nodes WHERE lifecycle_state IN ('enrolled', 'disconnected') AND release_generation IS NULL AND overlay_address IS NOT NULL ORDER BY name`,
      );
      const refused: string[] = [];
      for (let start = 0; start < nodes.length && !signal.aborted; start += SIDE_BY_SIDE) {
        const batch = nodes.slice(start, start + SIDE_BY_SIDE);
        const found = await Promise.all(batch.map((node) => judge(sources, node).catch((error: unknown) => `could not be composed: ${messageOf(error)}`)));
        found.forEach((why, index) => {
          if (why !== undefined) refused.push(`${batch[index]?.name}: ${why}`);
        });
      }
      if (refused.length > 0) {
        return failed(`${refused.length} of ${nodes.length} node(s) would be sent a declaration their host refuses: ${refused.slice(0, 10).join('; ')}${refused.length > 10 ? `; and ${refused.length - 10} more` : ''}`, 'correct what was declared for the node (mesh-control node declare) or its modules (mesh-control assign / unassign), then run mesh-control doctor again');
      }
      return passed(`the declaration each of ${nodes.length} node(s) would be sent now passes the host's contract`);
    },
  };
}

/** Why the node's host would refuse what it would be sent now; undefined when it would take it. */
async function judge(sources: ValidatorSources, node: Candidate): Promise<string | undefined> {
  const composed = node.overlay_applied_generation === null ? await composeOverlay(sources, node.name) : await composeFull(sources, node.name);
  let payload: Declaration;
  try {
    payload = parseContract(Declaration, {
      node: node.name,
      epoch: sources.epoch(),
      generation: Number(node.declaration_generation) + 1,
      kind: composed.kind,
      issued_at: sources.now().toISOString(),
      resources: composed.resources,
      ...(composed.overlay === undefined ? {} : { overlay: composed.overlay }),
      ...(composed.previously_owned === undefined ? {} : { previously_owned: composed.previously_owned }),
    }, 'declaration');
  } catch (error) {
    return `its ${composed.kind} declaration breaks the contract: ${messageOf(error)}`;
  }
  const envelope = sealEnvelope(payload, sources.signingKey);
  try {
    openEnvelopeWithDigest(envelope, sources.config.controller.public_key, Declaration);
  } catch (error) {
    return `its ${composed.kind} declaration does not open against the key nodes pin: ${messageOf(error)}`;
  }
  const own = payload.resources.map((resource) => ownUnitRefusal(resource, PACKAGED_HOST_RULES)).find((why) => why !== undefined);
  if (own !== undefined) return `its ${composed.kind} declaration would be refused whole by the host (own_unit): ${own}`;
  const shapes = SHAPES_FOR_HOST_KIND[node.host_kind ?? 'resident'];
  const foreign = payload.resources.find((resource) => !shapes.includes(resource.shape));
  if (foreign !== undefined) return `it is a ${node.host_kind} host, which takes only ${shapes.join(', ')}, and its ${composed.kind} declaration names a ${foreign.shape}`;
  const bytes = Buffer.byteLength(JSON.stringify(envelope));
  const max = sources.maxPayload();
  if (max !== undefined && bytes > max) return `its ${composed.kind} declaration is ${bytes} bytes, past the broker's largest message (${max})`;
  return undefined;
}
