import * as z from 'zod';
import { NodeName } from '../../../schema/primitives';
import { SeatName, type SeatListed } from '../../../schema/seat';
import type { ControllerContext } from '../controller-context';
import { nodeState } from '../declarations/compose-overlay';
import { NodeNotEnrolled } from '../declarations/declaration-errors';
import { overlayMembers } from '../declarations/declarations.repo';
import { nodeWorkQueue } from '../declarations/node-work-queue';
import { refuseShapesOfKind } from '../declarations/refuse-shapes-of-kind';
import { findCollision } from '../modules/find-collision';
import { ModuleCollision } from '../modules/module-errors';
import { nodeDeclarers } from '../modules/node-declarers';
import { sendWithModules } from '../modules/send-with-modules';
import type { SqlStore } from '../store/sql-store';
import { listSeats } from './list-seats';
import { SeatChangeUnclear, SeatHeldBySeveral, SeatHeldThroughModule, SeatHolderNotFound, SeatStillNeeded, SeatTaken } from './seat-errors';
import { addHolder, isReplicated, removeHolder, seatHoldings, seatNeeds, setReplicated } from './seats.repo';
import { nodesOnMesh } from './seats-left-without-holder';

/** The arguments of the `seat` verb: a seat and one change to it (`replicated` may ride with `add`). */
export const SeatChangeArgs = z.strictObject({
  seat: SeatName,
  add: NodeName.optional(),
  remove: NodeName.optional(),
  replicated: z.boolean().optional(),
});
/** See {@link SeatChangeArgs}. */
export type SeatChangeArgs = z.infer<typeof SeatChangeArgs>;

/** What `seat` did: what changed, the seat as it stands now, and what each node was sent. */
export interface SeatChanged {
  seat: string;
  /** Each change made, in words (`added node b`, `made replicated`); empty when nothing changed. */
  changed: string[];
  now: SeatListed;
  /** Each node sent its declaration again (its roster and resolver configuration follow the seat), or held with why. */
  sent: Array<{ node: string; generation: number | null; held: string | null }>;
}

/**
 * Changes one seat (`mesh-control seat NAME --add NODE | --remove NODE | --replicated |
 * --single`), all or nothing, then sends every node on the overlay its full declaration again,
 * since the roster fact and the resolver configuration of every node follow the seat.
 *
 * Refused with nothing recorded: a second holder of a seat that is not replicated (SeatTaken);
 * `--single` while several hold it (SeatHeldBySeveral); removing a node that holds it only
 * through a module (SeatHeldThroughModule) or not at all (SeatHolderNotFound); removing the last
 * holder of a seat a module still needs (SeatStillNeeded); a holder that could not take what
 * the seat composes on it (its kind of host, or a path another party declares there). One seat
 * is changed at a time: a lock on its name is held from the checks to the record.
 */
export async function changeSeat(ctx: ControllerContext, args: SeatChangeArgs): Promise<SeatChanged> {
  const { seat } = args;
  if (args.add === undefined && args.remove === undefined && args.replicated === undefined) throw new SeatChangeUnclear(seat, 'seat was given no change');
  if (args.add !== undefined && args.remove !== undefined) throw new SeatChangeUnclear(seat, 'seat was given --add and --remove at once');
  if (args.remove !== undefined && args.replicated !== undefined) throw new SeatChangeUnclear(seat, 'seat was given --remove with --replicated or --single');
  if (args.add !== undefined) {
    const state = await nodeState(ctx, args.add);
    if (state.lifecycle_state !== 'enrolled' && state.lifecycle_state !== 'disconnected') throw new NodeNotEnrolled(args.add, state.lifecycle_state);
  }

  const changed = await ctx.store.transaction(async (tx) => {
    // Two changes of one seat at once would each see the other's holder missing.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`mesh-seat:${seat}`]);
    const made: string[] = [];
    const holdings = await seatHoldings(tx, seat);
    const holders = [...new Set(holdings.map((holding) => holding.node))];
    // A holder revoked or released holds the seat in name only: it answers no one, so it
    // neither blocks a new holder of a single seat nor keeps one from being the last.
    const onMesh = await nodesOnMesh(tx);
    const replicated = await isReplicated(tx, seat);
    const at = ctx.now();
    if (args.replicated !== undefined && args.replicated !== replicated) {
      if (!args.replicated && holders.length > 1) throw new SeatHeldBySeveral(seat, holders);
      await setReplicated(tx, seat, args.replicated, at);
      made.push(args.replicated ? 'made replicated' : 'made single');
    }
    if (args.add !== undefined) {
      const node = args.add;
      const other = holders.find((holder) => holder !== node && onMesh.has(holder));
      if (other !== undefined && !(args.replicated ?? replicated)) throw new SeatTaken(seat, other, node, 'nothing was changed');
      if (await addHolder(tx, seat, node, at)) made.push(`added node ${node}`);
      // A single seat's holder by hand that left the mesh is replaced, not kept beside it.
      if (!(args.replicated ?? replicated)) {
        for (const gone of holdings.filter((holding) => holding.module === null && holding.node !== node && !onMesh.has(holding.node))) {
          if (await removeHolder(tx, seat, gone.node)) made.push(`removed node ${gone.node} (no longer on the mesh)`);
        }
      }
    }
    if (args.remove !== undefined) {
      const node = args.remove;
      const byHand = holdings.some((holding) => holding.node === node && holding.module === null);
      const modules = holdings.filter((holding) => holding.node === node && holding.module !== null).map((holding) => holding.module as string);
      if (modules.length > 0) throw new SeatHeldThroughModule(seat, node, modules);
      if (!byHand) throw new SeatHolderNotFound(seat, node, holders);
      if (onMesh.has(node) && !holders.some((holder) => holder !== node && onMesh.has(holder))) {
        const needs = (await seatNeeds(tx, seat)).filter((need) => onMesh.has(need.node));
        if (needs.length > 0) throw new SeatStillNeeded(seat, node, needs, 'nothing was changed');
      }
      await removeHolder(tx, seat, node);
      made.push(`removed node ${node}`);
    }
    // What the seat composes must fit every node as it would stand: judged inside the
    // transaction, so a refusal leaves nothing recorded.
    if (made.length > 0) await refuseWhatNodesCannotTake(ctx, tx, seat);
    return made;
  });

  const sent: SeatChanged['sent'] = [];
  if (changed.length > 0) {
    for (const member of await overlayMembers(ctx.store)) {
      const outcome = await nodeWorkQueue(ctx).run(member.name, () => sendWithModules(ctx, member.name));
      sent.push('sent' in outcome ? { node: member.name, generation: outcome.sent.generation, held: null } : { node: member.name, generation: null, held: outcome.held.reason });
    }
  }
  const now = (await listSeats(ctx.store)).find((listed) => listed.seat === seat) as SeatListed;
  return { seat, changed, now, sent };
}

async function refuseWhatNodesCannotTake(ctx: ControllerContext, tx: Parameters<Parameters<SqlStore['transaction']>[0]>[0], seat: string): Promise<void> {
  // The composers read only through `store.query`, so the transaction stands in for the store.
  const view = { store: tx as SqlStore, config: ctx.config };
  for (const member of await overlayMembers(tx)) {
    const declarers = await nodeDeclarers(view, member.name);
    const state = await nodeState(view, member.name);
    const seats = declarers.find((declarer) => declarer.party.name === 'the seats');
    refuseShapesOfKind(member.name, state.profile, seats?.resources ?? [], `seat ${seat} was not changed`);
    const collision = findCollision(declarers);
    if (collision !== undefined) throw new ModuleCollision(member.name, collision.key, collision.parties, `seat ${seat} was not changed`);
  }
}
