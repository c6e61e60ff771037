import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { SupervisionTreeNode } from '../../shared/supervisor/describe-tree';
import { emptyHostState, type HostState } from '../../../schema/host-state';
import { DECLARATION_STREAM, declarationSubject } from '../../shared/bus/subjects';
import { generateNodeIdentity, sealEnvelope } from '../../shared/crypto';
import { startFreezeProxy, type FreezeProxy } from '../../shared/testing/freeze-proxy';
import { admitDeclaration } from '../../host/link/admit-declaration';
import { recordDeclaration } from '../../host/link/record-declaration';
import { enrolledState } from '../../host/enrolment/enrolled-state';
import { callController } from '../control/call-controller';
import { sendComposed } from '../declarations/send-declaration';
import { LeaseLost, NotActing } from '../lease/lease-errors';
import { upsertNode } from '../store/nodes.repo';
import { serveController, type ServingController } from './serve-controller';
import { eventually } from './testing/eventually';
import { useTestMesh } from './testing/use-test-mesh';

// Two serving controllers on one mesh: one broker, one PostgreSQL store. Exactly one acts;
// a holder that stops hands over within a second; a holder whose link to the broker stalls
// stops acting before its lease can expire, the standby takes over under a higher epoch, and
// the host keeps the new holder's declarations and refuses the old holder's late one.

const suite = useTestMesh();

/** A host's state for `node`, enrolled in this mesh (its pins trust the mesh's controller key). */
function hostOf(node: string, identity: ReturnType<typeof generateNodeIdentity>): HostState {
  return enrolledState(
    emptyHostState(),
    { node, nkey_public: identity.nkey_public, public_key: identity.public_key, secret_key: identity.secret_key },
    { broker_url: suite.mesh.config.broker.url, broker_fingerprint: suite.mesh.config.broker.fingerprint, controller_public_key: suite.mesh.config.controller.public_key },
  );
}

async function enrolledNode(serving: ServingController, name: string): Promise<ReturnType<typeof generateNodeIdentity>> {
  const identity = generateNodeIdentity();
  await upsertNode(serving.ctx.store, { name, lifecycle_state: 'enrolled', public_key: identity.public_key, nkey: identity.nkey_public }, serving.ctx.now());
  return identity;
}

/** The declaration the stream holds for `node` now (the latest, as the node's consumer gets it). */
async function latestDeclaration(nc: NatsConnection, node: string): Promise<unknown> {
  const message = await (await jetstreamManager(nc)).streams.getMessage(DECLARATION_STREAM, { last_by_subj: declarationSubject(node) });
  return message?.json();
}

function leaseState(tree: SupervisionTreeNode): string | undefined {
  return tree.children.find((child) => child.id === 'lease')?.child_state;
}

describe('two controllers on one mesh', () => {
  let a: ServingController;
  let b: ServingController;
  const logA: string[] = [];
  const logB: string[] = [];

  beforeAll(async () => {
    a = await serveController(suite.mesh.dir, { log: (line) => logA.push(line) });
    b = await serveController(suite.mesh.dir, { log: (line) => logB.push(line) });
  }, 30_000);

  afterAll(async () => {
    await Promise.allSettled([a?.stop(), b?.stop()]);
  });

  test('exactly one acts: the other stands by, answers no calls and sends no declarations', async () => {
    expect(a.lease.isActing()).toBe(true);
    expect(b.lease.isActing()).toBe(false);
    expect(b.lease.standing()).toMatchObject({ state: 'standing by', epoch: null });
    expect(logB.join('\n')).toMatch(/standing by: the lease is held by .* \(since /);
    expect(logB.join('\n')).not.toMatch(/serving: epoch/);
    // The standby's acting children wait for the lease; every call is answered by the holder.
    expect(b.tree().children.find((child) => child.id === 'control')?.child_state).toBe('waitingForLease');
    for (let i = 0; i < 5; i += 1) expect(leaseState((await callController(suite.mesh.dir, 'tree', {})).result as SupervisionTreeNode)).toMatch(/^holding\./);

    await enrolledNode(a, 'kitchen');
    const sent = await sendComposed(a.ctx, 'kitchen', { kind: 'full', resources: [] });
    expect(sent.epoch).toBe(a.lease.epoch());
    const refused = await sendComposed(b.ctx, 'kitchen', { kind: 'full', resources: [] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NotActing);
    expect((refused as NotActing).message).toContain('did not send node kitchen its full declaration');
    expect(await a.ctx.store.query('SELECT generation, epoch FROM declarations WHERE node = $1', ['kitchen'])).toEqual([{ generation: sent.generation, epoch: sent.epoch }]);
  });

  test('a holder that stops gives the lease back, and the standby acts long before the lease could have expired, under a higher epoch', async () => {
    const epochBefore = a.lease.epoch();
    const stopped = a.stop();
    // The lease lives 15 s and was renewed at most 5 s ago: acting within 8 s is the give-back.
    await eventually('the standby acts', () => b.lease.isActing(), { timeoutMs: 8_000 });
    await stopped;
    expect(b.lease.epoch()).toBeGreaterThan(epochBefore);
    await eventually('the new holder answers calls', () => logB.some((line) => line.startsWith('serving: epoch')));
    expect(leaseState((await callController(suite.mesh.dir, 'tree', {})).result as SupervisionTreeNode)).toMatch(/^holding\./);
  });
});

describe('a holder whose link to the broker stalls', () => {
  // A lease of 3 s (acting stops 1 s before it could expire) keeps the test short.
  const lease = { bucket: 'mesh-controller_lease_stall', timings: { ttlMs: 3_000, renewEveryMs: 500, marginMs: 1_000, renewRetryMs: 200, contendEveryMs: 200 } };
  let proxy: FreezeProxy;
  let a: ServingController;
  let b: ServingController;

  beforeAll(async () => {
    proxy = await startFreezeProxy({ port: Number(new URL(suite.mesh.config.broker.url).port) });
  });

  afterAll(async () => {
    proxy?.thaw();
    await Promise.allSettled([a?.stop(), b?.stop()]);
    await proxy?.close();
  });

  test('stops acting before its lease can expire; the standby\'s declarations win at the host; a late one from the old epoch is refused', async () => {
    a = await serveController(suite.mesh.dir, { lease, brokerUrl: proxy.url, log: () => undefined });
    b = await serveController(suite.mesh.dir, { lease, log: () => undefined });
    expect([a.lease.isActing(), b.lease.isActing()]).toEqual([true, false]);
    const oldEpoch = a.lease.epoch();

    // The host of node attic takes the old holder's declaration.
    const identity = await enrolledNode(a, 'attic');
    let host = hostOf('attic', identity);
    await sendComposed(a.ctx, 'attic', { kind: 'full', resources: [] });
    const first = admitDeclaration(await latestDeclaration(b.ctx.nc, 'attic'), host);
    if (!first.ok) throw new Error(`the host refused the first declaration: ${first.detail}`);
    host = recordDeclaration(host, first);

    // The link stalls. A declaration the old holder sends in its last moments is held on the way.
    // Both gates watched every few milliseconds: never both open, the stalled one closed first.
    let both = false;
    let look = 0;
    let quietAt: number | undefined;
    let takenAt: number | undefined;
    const watch = setInterval(() => {
      look += 1;
      const [old, standby] = [a.lease.isActing(), b.lease.isActing()];
      if (old && standby) both = true;
      if (!old) quietAt ??= look;
      if (standby) takenAt ??= look;
    }, 5);
    proxy.freeze();
    const late = sendComposed(a.ctx, 'attic', { kind: 'full', resources: [] }).then((sent) => sent, (error: unknown) => error);
    try {
      await eventually('the stalled holder stops acting', () => quietAt !== undefined, { timeoutMs: 5_000 });
      await eventually('the standby acts', () => takenAt !== undefined, { timeoutMs: 8_000 });
    } finally {
      clearInterval(watch);
    }
    // The key could expire only ttl after the last renewal: the old holder had stopped acting by then.
    expect(both).toBe(false);
    expect(quietAt).toBeLessThanOrEqual(takenAt as number);
    expect(b.lease.epoch()).toBeGreaterThan(oldEpoch);
    await expect(sendComposed(a.ctx, 'attic', { kind: 'full', resources: [] })).rejects.toBeInstanceOf(NotActing);

    // The new holder's declaration, under the higher epoch, is taken by the host.
    const newer = await sendComposed(b.ctx, 'attic', { kind: 'full', resources: [] });
    const admitted = admitDeclaration(await latestDeclaration(b.ctx.nc, 'attic'), host);
    if (!admitted.ok) throw new Error(`the host refused the new holder's declaration: ${admitted.detail}`);
    expect(admitted.declaration).toMatchObject({ epoch: newer.epoch, generation: newer.generation });
    host = recordDeclaration(host, admitted);
    expect(host.highest_epoch).toBe(b.lease.epoch());

    // The link comes back: the held declaration lands, late, and the host refuses it.
    proxy.thaw();
    const lateSent = await late;
    expect(lateSent).toMatchObject({ epoch: oldEpoch });
    const arrived = await latestDeclaration(b.ctx.nc, 'attic');
    const refused = admitDeclaration(arrived, host);
    expect(refused).toMatchObject({ ok: false, reason: 'stale_epoch', epoch: oldEpoch });
    // Fenced by the epoch whatever its generation: even one numbered past the new holder's.
    const forged = admitDeclaration(sealEnvelope({ node: 'attic', epoch: oldEpoch, generation: newer.generation + 10, kind: 'full', issued_at: new Date().toISOString(), resources: [] }, a.ctx.signingKey), host);
    expect(forged).toMatchObject({ ok: false, reason: 'stale_epoch' });

    // The old holder's next renewal is refused: it has lost the lease, and ends.
    const ended = await a.ended;
    expect(ended).toBeInstanceOf(LeaseLost);
    expect(ended.message).toContain('lost its lease (KV bucket mesh-controller_lease, key holder');
    expect(b.lease.isActing()).toBe(true);
  }, 30_000);
});
