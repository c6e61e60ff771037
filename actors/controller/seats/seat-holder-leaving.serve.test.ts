import type { NatsConnection } from '@nats-io/transport-node';
import type { ControllerContext } from '../controller-context';
import { useTestController } from '../enrolment/testing/test-controller';
import { addModule } from '../modules/add-module';
import { assignModules } from '../modules/assign-modules';
import { PlanBook } from '../plans/plan-book';
import type { ReleaseOutcome } from '../release/release-node';
import type { RevokeOutcome } from '../release/revoke-node';
import { composeStatus } from '../status/compose-status';
import type { SeatChanged } from './change-seat';
import { SeatHolderLeaving } from './seat-errors';
import { seatsPart } from './seats.part';

// The last holder of a seat something needs, taken off the mesh, over a real broker and
// PostgreSQL: `node release` is refused, naming the seat and what needs it, unless --force, and
// then says so loudly; `node revoke` (an emergency) goes through, says so, and `status` names the
// seat left without a holder until one is added, which the revoked holder does not block.

const NODES = ['alpha', 'beta', 'gamma'] as const;

describe('the last holder of a needed seat leaving the mesh', () => {
  const t = useTestController('postgres');
  let ctx: ControllerContext;
  const links = new Map<string, NatsConnection>();

  const call = async <R>(verb: string, args: Record<string, unknown>): Promise<{ result: R; text: string }> => {
    const answer = await t.verbs.call(ctx, verb, args);
    return { result: answer.result as R, text: answer.text };
  };
  const status = () => composeStatus({ store: ctx.store, gate: { standing: () => ({ state: 'acting', epoch: 1, note: null }) } as never, leaseHolder: async () => null, tree: () => undefined, controller: 'test', now: () => new Date() });
  const seatProblems = async () => (await status()).problems.filter((problem) => problem.kind === 'seat');
  const finals = async (node: string) => ctx.store.query("SELECT generation FROM declarations WHERE node = $1 AND kind = 'final'", [node]);

  beforeAll(async () => {
    ctx = t.ctx;
    await seatsPart.start(ctx, t.verbs);
    for (const name of NODES) {
      const { link } = await t.enrolOnOverlay(name);
      links.set(name, link);
    }
    for (const [name, seat] of [['cache-user', 'build-cache'], ['art-user', 'artifact-store']] as const) {
      await addModule(ctx, new PlanBook(ctx), { module: { name, version: '1', upgrade_policy: 'together', resources: [], seats: { holds: [], needs: [seat] } } });
    }
    await call<SeatChanged>('seat', { seat: 'build-cache', add: 'alpha' });
    await call<SeatChanged>('seat', { seat: 'artifact-store', add: 'gamma' });
    await assignModules(ctx, { node: 'beta', modules: ['cache-user', 'art-user'] });
  }, 120_000);

  test('revoking the last holder goes through, says so, and status names the seat until a holder is added', async () => {
    expect(await seatProblems()).toEqual([]);

    const revoked = await call<RevokeOutcome>('node.revoke', { node: 'gamma', why: 'stolen' });

    expect((await ctx.store.query<{ lifecycle_state: string }>("SELECT lifecycle_state FROM nodes WHERE name = 'gamma'"))[0]?.lifecycle_state).toBe('revoked');
    expect(revoked.result.seats_left_without_holder).toEqual([{ seat: 'artifact-store', needed_by: [{ module: 'art-user', node: 'beta' }], held_in_name_by: ['gamma'] }]);
    expect(revoked.text).toMatch(/WARNING: seat artifact-store is left without a holder on the mesh, and module art-user on node beta needs it; add one: mesh-control seat artifact-store --add NODE/);
    expect(await seatProblems()).toEqual([
      { kind: 'seat', subject: 'artifact-store', detail: expect.stringMatching(/^seat artifact-store has no holder on the mesh \(held in name only by gamma, no longer on the mesh\), and module art-user on node beta needs it; add one: mesh-control seat artifact-store --add NODE$/) },
    ]);

    // The revoked holder of this single seat does not block a new one: it is replaced.
    const added = await call<SeatChanged>('seat', { seat: 'artifact-store', add: 'beta' });
    expect(added.result.changed).toEqual(['added node beta', 'removed node gamma (no longer on the mesh)']);
    expect(await seatProblems()).toEqual([]);
  });

  test('releasing the last holder is refused, naming the seat and what needs it, and nothing is sent', async () => {
    const refused = await call('node.release', { node: 'alpha' }).catch((error: unknown) => error);

    expect(refused).toBeInstanceOf(SeatHolderLeaving);
    expect((refused as SeatHolderLeaving).message).toMatch(/^node alpha is the last holder on the mesh of seat build-cache, which module cache-user on node beta still needs; it was not released and nothing was sent/);
    expect((refused as SeatHolderLeaving).next).toMatch(/mesh-control seat build-cache --add NODE.*mesh-control node release alpha --force/);
    expect(await finals('alpha')).toEqual([]);
  });

  test('released with --force, it goes, saying loudly which seat is left without a holder', async () => {
    const released = await call<ReleaseOutcome>('node.release', { node: 'alpha', force: true });

    expect(released.result).toMatchObject({ node: 'alpha', released: false, seats_left_without_holder: [{ seat: 'build-cache', needed_by: [{ module: 'cache-user', node: 'beta' }], held_in_name_by: ['alpha'] }] });
    expect(await finals('alpha')).toEqual([{ generation: released.result.generation }]);
    expect(released.text).toMatch(/final declaration sent .*\nWARNING: seat build-cache is left without a holder on the mesh, and module cache-user on node beta needs it/);
  });
});
