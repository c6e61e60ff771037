import { createActor, SimulatedClock, type AnyActorRef } from 'xstate';
import { describeTree } from '../../shared/supervisor/describe-tree';
import { settle } from '../../shared/supervisor/fake-child';
import type { PassReport } from '../reconcile/reconcile-pass';
import { NODE_SUPERVISION, nodeLogic } from './node-children';
import type { NodeWork } from './node-work';

/**
 * The parts of NodeWork the node's actors call, by hand: each records what it was asked, and
 * the link can be told to fail as it opens.
 */
class FakeNodeWork {
  linkOpens = 0;
  linkCloses = 0;
  intakeStarts = 0;
  heartbeatStarts = 0;
  passes = 0;
  reconcile: AnyActorRef | undefined;
  linkFailures: string[] = [];

  openLink(): () => void {
    this.linkOpens += 1;
    const failure = this.linkFailures.shift();
    if (failure !== undefined) throw new Error(failure);
    return () => {
      this.linkCloses += 1;
    };
  }

  hearDeclarations(): () => void {
    this.intakeStarts += 1;
    return () => undefined;
  }

  sendHeartbeats(): () => void {
    this.heartbeatStarts += 1;
    return () => undefined;
  }

  async pass(): Promise<PassReport> {
    this.passes += 1;
    return { reasons: ['start'], startedAt: '2026-12-03T10:00:00Z', durationMs: 0, results: [], counts: {} };
  }

  passed(): void {}

  attachReconcile(reconcile: AnyActorRef): void {
    this.reconcile = reconcile;
    reconcile.send({ type: 'host.started' });
  }

  detachReconcile(): void {
    this.reconcile = undefined;
  }
}

test('the node runs link, intake, heartbeats and reconcile, and reconcile starts with a pass', async () => {
  const work = new FakeNodeWork();
  const actor = createActor(nodeLogic(() => work as unknown as NodeWork), { clock: new SimulatedClock() }).start();
  await settle();
  expect(describeTree(actor).children.map((child) => [child.id, child.state])).toEqual([['link', 'running'], ['intake', 'running'], ['heartbeats', 'running'], ['reconcile', 'running']]);
  expect([work.linkOpens, work.intakeStarts, work.heartbeatStarts, work.passes]).toEqual([1, 1, 1, 1]);
  actor.stop();
  expect(work.linkCloses).toBe(1);
});

test('a link that fails is restarted alone after its backoff; the other parts go on untouched', async () => {
  const work = new FakeNodeWork();
  work.linkFailures.push('no route to the broker');
  const clock = new SimulatedClock();
  const actor = createActor(nodeLogic(() => work as unknown as NodeWork), { clock }).start();
  await settle();
  const link = describeTree(actor).children.find((child) => child.id === 'link');
  expect(link).toMatchObject({ state: 'backingOff', restarts: 1, last_error: 'no route to the broker' });
  expect(work.linkOpens).toBe(1);

  clock.increment(NODE_SUPERVISION.backoff.maxMs);
  await settle();
  expect(describeTree(actor).children.find((child) => child.id === 'link')).toMatchObject({ state: 'running' });
  expect([work.linkOpens, work.intakeStarts, work.heartbeatStarts, work.passes]).toEqual([2, 1, 1, 1]);
  actor.stop();
});

test('a link that keeps failing makes the node give up, naming it, so the lifecycle above is restarted', async () => {
  const work = new FakeNodeWork();
  work.linkFailures.push(...Array.from({ length: NODE_SUPERVISION.maxRestarts + 1 }, (_, index) => `refused ${index + 1}`));
  const clock = new SimulatedClock();
  const actor = createActor(nodeLogic(() => work as unknown as NodeWork), { clock }).start();
  for (let restart = 0; restart < NODE_SUPERVISION.maxRestarts + 1; restart += 1) {
    await settle();
    clock.increment(NODE_SUPERVISION.backoff.maxMs);
  }
  await settle();
  expect(actor.getSnapshot().status).toBe('done');
  expect(actor.getSnapshot().output).toMatchObject({ child: 'link', error: `refused ${NODE_SUPERVISION.maxRestarts + 1}` });
});
