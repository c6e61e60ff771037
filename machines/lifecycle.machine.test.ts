import { createActor, fromCallback, fromPromise, initialTransition, SimulatedClock, transition, waitFor } from 'xstate';
import type { AnyEventObject, SnapshotFrom } from 'xstate';
import { DEFAULT_RELEASE_RETRY_DELAY_MS, lifecycleMachine } from './lifecycle.machine';
import type { EnrolInput, LifecycleIdentity, ReleaseInput } from './lifecycle.machine';

type Snapshot = SnapshotFrom<typeof lifecycleMachine>;

function setback(condition: string, retryable = false): Error {
  return Object.assign(new Error(`${condition} happened`), { name: condition, retryable });
}

function walk(events: AnyEventObject[], input = {}): Snapshot {
  let [snapshot] = initialTransition(lifecycleMachine, input);
  for (const event of events) [snapshot] = transition(lifecycleMachine, snapshot, event as never);
  return snapshot;
}

const toEnrolled: AnyEventObject[] = [
  { type: 'operator.install' },
  { type: 'operator.enrol', token: 'MESH1-token' },
  { type: 'xstate.done.actor.enrol', actorId: 'enrol', output: { node: 'workstation' } },
];
const toReleasing: AnyEventObject[] = [...toEnrolled, { type: 'declaration.final' }];
const releaseFailed = (error: Error): AnyEventObject => ({ type: 'xstate.error.actor.release', actorId: 'release', error });

describe('lifecycle machine', () => {
  test('starts unmanaged, with no identity', () => {
    const snapshot = walk([]);
    expect(snapshot.value).toBe('unmanaged');
    expect(snapshot.context.identity).toBeNull();
  });

  test('an installed host is hosted, which is not a node', () => {
    const snapshot = walk([{ type: 'operator.install' }]);
    expect(snapshot.value).toBe('hosted');
    expect(snapshot.context.identity).toBeNull();
  });

  test('enrolment keeps the identity the controller gave and starts operating', () => {
    const snapshot = walk(toEnrolled);
    expect(snapshot.value).toEqual({ enrolled: 'operating' });
    expect(snapshot.context.identity).toEqual({ node: 'workstation' });
  });

  test('a refused enrolment goes back to hosted with the reason kept for the person', () => {
    const snapshot = walk([
      { type: 'operator.install' },
      { type: 'operator.enrol', token: 'MESH1-token' },
      { type: 'xstate.error.actor.enrol', actorId: 'enrol', error: setback('TokenExpired') },
    ]);
    expect(snapshot.value).toBe('hosted');
    expect(snapshot.context.identity).toBeNull();
    expect(snapshot.context.enrolRefusal).toEqual({ condition: 'TokenExpired', message: 'TokenExpired happened', retryable: false });
  });

  test('a refusal that is not an error object is still kept, as what it says', () => {
    const snapshot = walk([
      { type: 'operator.install' },
      { type: 'operator.enrol', token: 'MESH1-token' },
      { type: 'xstate.error.actor.enrol', actorId: 'enrol', error: 'socket hang up' },
    ]);
    expect(snapshot.context.enrolRefusal).toEqual({ condition: 'Error', message: 'socket hang up', retryable: false });
  });

  test('enrolling again forgets the previous refusal, and can succeed', () => {
    const refused = walk([
      { type: 'operator.install' },
      { type: 'operator.enrol', token: 'MESH1-typo' },
      { type: 'xstate.error.actor.enrol', actorId: 'enrol', error: setback('TokenMistyped') },
      { type: 'operator.enrol', token: 'MESH1-token' },
    ]);
    expect(refused.value).toBe('enrolling');
    expect(refused.context.enrolRefusal).toBeNull();
    const [enrolled] = transition(lifecycleMachine, refused, { type: 'xstate.done.actor.enrol', actorId: 'enrol', output: { node: 'laptop' } } as never);
    expect(enrolled.context.identity).toEqual({ node: 'laptop' });
  });

  test('a node that loses its link is disconnected, keeps its identity, and comes back enrolled', () => {
    const away = walk([...toEnrolled, { type: 'link.lost' }]);
    expect(away.value).toBe('disconnected');
    expect(away.context.identity).toEqual({ node: 'workstation' });
    const [back] = transition(lifecycleMachine, away, { type: 'link.restored' });
    expect(back.value).toEqual({ enrolled: 'operating' });
  });

  test('a disconnected node cannot be released or enrolled: only the link brings it back', () => {
    const away = walk([...toEnrolled, { type: 'link.lost' }]);
    for (const event of [{ type: 'declaration.final' }, { type: 'operator.enrol', token: 'MESH1-token' }] as const) {
      const [next] = transition(lifecycleMachine, away, event);
      expect(next.value).toBe('disconnected');
    }
  });

  test('an enrolled node refuses a second enrolment by staying as it is', () => {
    const [next] = transition(lifecycleMachine, walk(toEnrolled), { type: 'operator.enrol', token: 'MESH1-other' });
    expect(next.value).toEqual({ enrolled: 'operating' });
    expect(next.context.identity).toEqual({ node: 'workstation' });
  });

  test('a finished release drops the identity and leaves the host installed', () => {
    const snapshot = walk([...toReleasing, { type: 'xstate.done.actor.release', actorId: 'release', output: undefined }]);
    expect(snapshot.value).toBe('hosted');
    expect(snapshot.context.identity).toBeNull();
    expect(snapshot.context.releaseAttempts).toBe(0);
  });

  test('a release that left something behind waits and tries again, keeping the identity', () => {
    const snapshot = walk([...toReleasing, releaseFailed(setback('PackageDatabaseLocked', true))]);
    expect(snapshot.value).toEqual({ enrolled: 'retrying' });
    expect(snapshot.context.identity).toEqual({ node: 'workstation' });
    expect(snapshot.context.releaseFailure).toEqual({ condition: 'PackageDatabaseLocked', message: 'PackageDatabaseLocked happened', retryable: true });
    const [again] = transition(lifecycleMachine, snapshot, { type: 'xstate.after.releaseRetryDelay.lifecycle.enrolled.retrying' } as never);
    expect(again.value).toEqual({ enrolled: 'releasing' });
    expect(again.context.releaseAttempts).toBe(2);
  });

  test('a release is never given up: a failure that is not retryable is tried again too, as the host does on its next pass', () => {
    // The real host retries every failed removal on every later pass and reports each time; a
    // node that dropped its identity with something left behind could never be asked again.
    const snapshot = walk([...toReleasing, releaseFailed(setback('RemovalRefused'))]);
    expect(snapshot.value).toEqual({ enrolled: 'retrying' });
    expect(snapshot.context.releaseFailure?.condition).toBe('RemovalRefused');
    expect(snapshot.context.identity).toEqual({ node: 'workstation' });
  });

  test('losing the link during a release keeps the final declaration held, and the release resumes on return', async () => {
    const asked: string[] = [];
    const machine = lifecycleMachine.provide({
      actors: {
        enrol: fromPromise<LifecycleIdentity, EnrolInput>(async ({ input }) => {
          asked.push(`enrol ${input.token}`);
          return { node: 'workstation' };
        }),
        release: fromPromise<void, ReleaseInput>(({ input, signal }) => new Promise((_resolve, reject) => {
          asked.push(`release ${input.node}`);
          signal.addEventListener('abort', () => {
            asked.push('release aborted');
            reject(signal.reason);
          });
        })),
      },
    });
    const actor = createActor(machine, { input: {} }).start();
    actor.send({ type: 'operator.install' });
    actor.send({ type: 'operator.enrol', token: 'MESH1-token' });
    await new Promise((resolve) => setImmediate(resolve));
    actor.send({ type: 'declaration.final' });
    actor.send({ type: 'link.lost' });
    expect(actor.getSnapshot().value).toBe('disconnected');
    expect(actor.getSnapshot().context.finalDeclarationHeld).toBe(true);
    actor.send({ type: 'link.restored' });
    expect(actor.getSnapshot().value).toEqual({ enrolled: 'releasing' });
    expect(asked).toEqual(['enrol MESH1-token', 'release workstation', 'release aborted', 'release workstation']);
    actor.stop();
  });

  test('the retry waits for the provided delay on the actor system clock', async () => {
    let releases = 0;
    const machine = lifecycleMachine.provide({
      actors: {
        release: fromPromise<void, ReleaseInput>(async () => {
          releases += 1;
          throw setback('PackageDatabaseLocked', true);
        }),
      },
    });
    const clock = new SimulatedClock();
    const enrolled = walk(toEnrolled);
    const actor = createActor(machine, { clock, input: {}, snapshot: enrolled }).start();
    actor.send({ type: 'declaration.final' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(actor.getSnapshot().value).toEqual({ enrolled: 'retrying' });
    clock.increment(DEFAULT_RELEASE_RETRY_DELAY_MS - 1);
    expect(releases).toBe(1);
    clock.increment(1);
    expect(releases).toBe(2);
    actor.stop();
  });

  test('a node resolved as disconnected, with no link yet, operates once linked', () => {
    const resumed = lifecycleMachine.resolveState({
      value: 'disconnected',
      context: { identity: { node: 'workstation' }, enrolRefusal: null, releaseFailure: null, releaseAttempts: 0, finalDeclarationHeld: false },
    });
    const [linked] = transition(lifecycleMachine, resumed, { type: 'link.restored' });
    expect(linked.value).toEqual({ enrolled: 'operating' });
    expect(linked.context.identity).toEqual({ node: 'workstation' });
  });

  test('the placeholder enrol actor says how to provide the real one', async () => {
    const actor = createActor(lifecycleMachine, { input: {} }).start();
    actor.send({ type: 'operator.install' });
    actor.send({ type: 'operator.enrol', token: 'MESH1-token' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(actor.getSnapshot().context.enrolRefusal?.message).toMatch(/provide the enrol actor/);
    actor.stop();
  });

  test('every state says what it has and can, for the charts and for a newcomer', () => {
    const described = (node: { description?: string; states: Record<string, unknown> }): string[] => [
      ...(node.description ? [] : ['(undescribed)']),
      ...Object.values(node.states).flatMap((child) => described(child as typeof node)),
    ];
    expect(described(lifecycleMachine.root)).toEqual([]);
  });
  test('a running host that finds an identity in its store is the node, an earlier refusal past', () => {
    const snapshot = walk([
      { type: 'operator.install' },
      { type: 'operator.enrol', token: 'MESH1-token' },
      { type: 'xstate.error.actor.enrol', actorId: 'enrol', error: setback('TokenExpired') },
      { type: 'xstate.done.actor.identity', actorId: 'identity', output: { node: 'workstation' } },
    ]);
    expect(snapshot.value).toEqual({ enrolled: 'operating' });
    expect(snapshot.context.identity).toEqual({ node: 'workstation' });
    expect(snapshot.context.enrolRefusal).toBeNull();
  });

  test('becoming the node spawns its work, which lives through a lost link and ends with the release', async () => {
    let nodeRuns = 0;
    let found = 0;
    const machine = lifecycleMachine.provide({
      actors: {
        // Found once; released, the machine waits for the next enrolment, which never comes here.
        identity: fromPromise(() => (found++ === 0 ? Promise.resolve({ node: 'workstation' }) : new Promise<never>(() => undefined))),
        node: fromCallback(() => {
          nodeRuns += 1;
        }),
        release: fromPromise<void, ReleaseInput>(async () => undefined),
      },
    });
    const actor = createActor(machine, { input: {} }).start();
    actor.send({ type: 'operator.install' });
    const operating = await waitFor(actor, (snapshot) => snapshot.matches({ enrolled: 'operating' }));
    const node = operating.children.node;
    expect(node?.getSnapshot().status).toBe('active');
    actor.send({ type: 'link.lost' });
    expect(actor.getSnapshot().value).toBe('disconnected');
    expect(actor.getSnapshot().children.node).toBe(node);
    actor.send({ type: 'link.restored' });
    actor.send({ type: 'declaration.final' });
    const hosted = await waitFor(actor, (snapshot) => snapshot.matches('hosted'));
    expect(hosted.children.node).toBeUndefined();
    expect(node?.getSnapshot().status).toBe('stopped');
    expect(nodeRuns).toBe(1);
    actor.stop();
  });

  test('a final declaration taken again while a failed release waits tries at once', () => {
    const snapshot = walk([...toReleasing, releaseFailed(setback('ApplyFailed', true)), { type: 'declaration.final' }]);
    expect(snapshot.value).toEqual({ enrolled: 'releasing' });
    expect(snapshot.context.releaseAttempts).toBe(2);
  });
});
