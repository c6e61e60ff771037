/**
 * The link machine's paths, walked by the real link: openPinnedLink, which runs the link actor
 * (linkLogic) with its real NATS attempt (certificate probe, then a pinned connection as the
 * node's nkey user), watch and check, against a real nats-server with TLS — through a freeze
 * proxy that holds, lets through, cuts and freezes connections as a network does
 * (actors/host/link/testing/link-rig.ts). The link's waits run on a simulated clock and its
 * jitter is nil, so every delay is known.
 *
 * The proxy holds every new connection: an attempt sits at its certificate probe until a driver
 * lets it through (done), cuts it (error), rouses the link, or advances the clock past the
 * attempt timeout. A rouse on a steady link first freezes its connection, so the check it
 * sends stays unanswered until a driver thaws it (check done) or the clock runs out the
 * liveness timeout. The watch ends when the proxy cuts the connection. The assertions read the
 * link's own state and backoff count, what it told the host, and the proxy's connections: which
 * are open on the host's side, which are held.
 *
 * One path step the network cannot make as the model draws it: the liveness timeout from
 * `verifying.waiting`. The standby delay is shorter, so advancing the clock through the
 * liveness timeout passes `racing` on the way (a new connection is tried, held, and called
 * off); the link ends in `backingOff` with the count the model says, which is what is checked.
 */
import { backoffCeiling, linkMachine } from '../machines/link.machine';
import { generateNodeIdentity, ready } from '../actors/shared/crypto';
import type { HostIdentity } from '../schema/host-state';
import { startTestBroker } from '../tests/broker/test-broker';
import type { TestBroker } from '../tests/broker/test-broker';
import type { ProxiedConnection } from '../actors/shared/testing/freeze-proxy';
import { LinkRig, RIG_BACKOFF, RIG_TIMINGS, until } from '../actors/host/link/testing/link-rig';
import { afterEventType, describeModel, doneEvent, errorEvent } from './harness';
import type { ModelTransition } from './harness';

const NODE = 'walker';

// One broker for every path; each path gets its own proxy and link.
let brokerStarted: Promise<{ broker: TestBroker; identity: HostIdentity }> | undefined;
function brokerForPaths(): Promise<{ broker: TestBroker; identity: HostIdentity }> {
  brokerStarted ??= (async () => {
    await ready();
    const broker = await startTestBroker({ dirPrefix: 'link-model test-broker' });
    const identity = { node: NODE, ...generateNodeIdentity() };
    await broker.addNodeUser(NODE, identity.nkey_public);
    return { broker, identity };
  })();
  return brokerStarted;
}
afterAll(async () => {
  if (brokerStarted !== undefined) await (await brokerStarted).broker.stop();
});

interface System {
  rig: LinkRig;
  /** Simulated time each timed state was entered. */
  since: { connecting: number; backingOff: number; steady: number; verifying: number };
  /** Links the model has made so far, to compare with what the host was told. */
  links: number;
}

type Snapshot = ModelTransition<typeof linkMachine>['to'];

const settle = (ms = 30) => new Promise((resolve) => setTimeout(resolve, ms));
const sameState = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

function expectModelled(system: System, snapshot: Snapshot): void {
  const status = system.rig.link.status();
  expect(status.state).toEqual(snapshot.value);
  expect(status.failures).toBe(snapshot.context.failures);
}

/**
 * Advances the simulated clock by `ms` (at least 1), checking first that one millisecond less
 * leaves the link where it was (`before`), unless `before` is undefined.
 */
function runDown(system: System, ms: number, before: unknown): void {
  const { clock, link } = system.rig;
  expect(ms).toBeGreaterThanOrEqual(1);
  clock.increment(ms - 1);
  if (before !== undefined) expect(link.status().state).toEqual(before);
  clock.increment(1);
}

function elapsed(system: System, since: number): number {
  return system.rig.clock.now() - since;
}

/** Notes when each timed state was entered, by comparing the model's snapshots around a step. */
function noteEntries(system: System, step: ModelTransition<typeof linkMachine>): void {
  const now = system.rig.clock.now();
  const entered = (value: object | string): boolean => step.to.matches(value as never) && (!step.from.matches(value as never) || reentered(step, value));
  if (entered('connecting')) system.since.connecting = now;
  if (entered('backingOff')) system.since.backingOff = now;
  if (entered({ linked: 'steady' })) system.since.steady = now;
  if (entered({ linked: 'verifying' })) system.since.verifying = now;
}

function reentered(step: ModelTransition<typeof linkMachine>, value: object | string): boolean {
  // A new connection beside a silent one re-enters `linked`, and with it `steady`.
  return step.label.startsWith('xstate.done.actor.standby') && sameState(value, { linked: 'steady' });
}

/** Wraps a driver: make it happen, wait until the real link is where the model says, note entries. */
function driver(act: (system: System, step: ModelTransition<typeof linkMachine>) => Promise<void> | void) {
  return async (system: System, _event: unknown, step: ModelTransition<typeof linkMachine>): Promise<void> => {
    await act(system, step);
    await until(`the link to be in ${JSON.stringify(step.to.value)}`, () => (sameState(system.rig.link.status().state, step.to.value) ? true : undefined));
    noteEntries(system, step);
  };
}

async function heldAttemptEnds(system: System, act: () => void): Promise<void> {
  const held = await system.rig.heldAttempt();
  act();
  await held.clientEnded;
}

describeModel({
  machine: linkMachine,
  input: { backoff: RIG_BACKOFF, timings: RIG_TIMINGS },
  // Whether failures are counted is what changes behaviour (the settling guard); how many is
  // read from the exact snapshot by the drivers that wait out a delay.
  serializeState: (snapshot) => JSON.stringify([snapshot.value, snapshot.context.failures > 0]),
  simplePaths: false,
  timeoutMs: 30_000,
  async setup(): Promise<System> {
    const { broker, identity } = await brokerForPaths();
    const rig = await LinkRig.start(broker, identity);
    return { rig, since: { connecting: 0, backingOff: 0, steady: 0, verifying: 0 }, links: 0 };
  },
  async teardown({ rig }) {
    await rig.dispose();
  },
  events: {
    'xstate.done.actor.attempt': {
      samples: [doneEvent('attempt', { sample: 'connection' })],
      drive: driver(async (system) => {
        await system.rig.letAttemptThrough();
        system.links += 1;
      }),
    },
    'xstate.error.actor.attempt': {
      samples: { 'the network closed it': errorEvent('attempt', new Error('the broker closed the connection before its certificate was read')) },
      drive: driver(async ({ rig }) => {
        await rig.heldAttempt();
        await rig.failAttempt();
      }),
    },
    [afterEventType('attemptTimeout', 'link.connecting')]: {
      drive: driver((system, step) => heldAttemptEnds(system, () => {
        runDown(system, RIG_TIMINGS.attemptTimeoutMs - elapsed(system, system.since.connecting), step.from.value);
      })),
    },
    [afterEventType('retryDelay', 'link.backingOff')]: {
      drive: driver(async (system, step) => {
        const delay = backoffCeiling(step.from.context.failures, RIG_BACKOFF);
        runDown(system, delay - elapsed(system, system.since.backingOff), step.from.value);
        await system.rig.heldAttempt();
      }),
    },
    'operator.rouse': {
      drive: driver(async (system, step) => {
        const { rig } = system;
        if (step.from.matches('connecting')) {
          await heldAttemptEnds(system, () => { rig.link.rouse(); });
        } else if (step.from.matches('backingOff')) {
          // The rouse is taken and the wait runs on: one millisecond short of it, still waiting.
          rig.acceptedSinceLastLook();
          expect(rig.link.rouse()).toMatch(/does not shorten/);
          const delay = backoffCeiling(step.from.context.failures, RIG_BACKOFF);
          rig.clock.increment(delay - elapsed(system, system.since.backingOff) - 1);
          await settle();
          expect(rig.link.status().state).toBe('backingOff');
          expect(rig.acceptedSinceLastLook()).toEqual([]);
        } else if (step.from.matches({ linked: 'steady' })) {
          rig.freezeLink();
          expect(rig.link.rouse()).toBe('checking that the link still answers');
        } else {
          // Already checking: absorbed, nothing new is tried.
          rig.acceptedSinceLastLook();
          expect(rig.link.rouse()).toMatch(/taken as the same rouse/);
          await settle();
          expect(rig.acceptedSinceLastLook()).toEqual([]);
        }
      }),
    },
    'host.stopping': {
      drive: driver(async ({ rig }) => {
        await rig.link.close();
      }),
    },
    'xstate.done.actor.watch': {
      samples: [doneEvent('watch', 'the broker closed the connection')],
      drive: driver(async ({ rig }) => {
        rig.linkedPair?.cut();
        await until('the link to notice', () => (rig.link.current() === null ? true : undefined));
        expect(rig.listener.notes.at(-1)).toBe('the connection to the broker closed: the broker closed the connection; connecting again');
      }),
    },
    [afterEventType('settledAfter', 'link.linked.steady')]: {
      drive: driver((system, step) => {
        runDown(system, RIG_TIMINGS.settledAfterMs - elapsed(system, system.since.steady), step.from.value);
      }),
    },
    'xstate.done.actor.check': {
      samples: [doneEvent('check', undefined)],
      drive: driver(async ({ rig }, step) => {
        const standby = step.from.matches({ linked: { verifying: 'racing' } }) ? await rig.heldAttempt() : undefined;
        rig.thawLink();
        await until('the answer', () => (rig.link.phase() === 'linked' ? true : undefined));
        // The new connection beside it is called off.
        if (standby !== undefined) await standby.clientEnded;
      }),
    },
    [afterEventType('livenessTimeout', 'link.linked.verifying')]: {
      drive: driver(async (system, step) => {
        const old = system.rig.linkedPair as ProxiedConnection;
        runDown(system, RIG_TIMINGS.livenessTimeoutMs - elapsed(system, system.since.verifying), step.from.matches({ linked: { verifying: 'waiting' } }) ? undefined : step.from.value);
        await old.clientEnded;
      }),
    },
    [afterEventType('standbyAfter', 'link.linked.verifying.waiting')]: {
      drive: driver(async (system, step) => {
        runDown(system, RIG_TIMINGS.standbyAfterMs - elapsed(system, system.since.verifying), step.from.value);
        await system.rig.heldAttempt();
      }),
    },
    'xstate.done.actor.standby': {
      samples: [doneEvent('standby', { sample: 'new connection' })],
      drive: driver(async (system) => {
        const old = system.rig.linkedPair as ProxiedConnection;
        await system.rig.letAttemptThrough();
        system.links += 1;
        await old.clientEnded;
      }),
    },
    'xstate.error.actor.standby': {
      samples: { 'the network closed it': errorEvent('standby', new Error('the broker closed the connection before its certificate was read')) },
      drive: driver(async ({ rig }) => {
        const held = await rig.heldAttempt();
        await rig.failAttempt();
        await held.clientEnded;
      }),
    },
  },
  states: {
    async connecting(system, snapshot) {
      expectModelled(system, snapshot);
      const held = await system.rig.heldAttempt();
      expect(held.clientClosed).toBe(false);
      expect(system.rig.link.current()).toBeNull();
      expect(system.rig.listener.links).toHaveLength(system.links);
    },
    async backingOff(system, snapshot) {
      expectModelled(system, snapshot);
      // Nothing is attempted or held open while waiting.
      await until('every connection of the host closed', () => (system.rig.proxy.open().length === 0 ? true : undefined));
      expect(system.rig.link.current()).toBeNull();
      expect(system.rig.listener.unlinks).toBe(system.links);
    },
    async linked(system, snapshot) {
      expectModelled(system, snapshot);
      const { rig } = system;
      expect(rig.listener.links).toHaveLength(system.links);
      expect(rig.link.current()).toBe(rig.listener.links.at(-1));
      expect(rig.linkedPair?.clientClosed).toBe(false);
    },
    async 'linked.steady'(system) {
      const { rig } = system;
      expect(rig.link.phase()).toBe('linked');
      // The link works: a round trip to the broker, on the connection the proxy carries.
      await rig.link.current()!.flush();
      expect(rig.linkedPair?.frozen).toBe(false);
      expect(rig.newerOpen()).toEqual([]);
    },
    async 'linked.verifying.waiting'(system) {
      const { rig } = system;
      expect(rig.link.phase()).toBe('verifying');
      expect(rig.linkedPair?.frozen).toBe(true);
      // No new connection yet: the silent link is still given its chance alone.
      await settle();
      expect(rig.newerOpen()).toEqual([]);
    },
    async 'linked.verifying.racing'(system) {
      const { rig } = system;
      expect(rig.linkedPair?.frozen).toBe(true);
      const beside = await rig.heldAttempt();
      expect(beside.clientClosed).toBe(false);
    },
    async 'linked.verifying.alone'(system) {
      const { rig } = system;
      expect(rig.linkedPair?.frozen).toBe(true);
      await until('the failed new connection closed', () => (rig.newerOpen().length === 0 ? true : undefined));
    },
    async stopped(system) {
      const { rig } = system;
      expect(rig.link.phase()).toBe('stopped');
      expect(rig.link.current()).toBeNull();
      await until('every connection of the host closed', () => (rig.proxy.open().length === 0 ? true : undefined));
      // Nothing is attempted after the stop, however long the clock runs.
      rig.acceptedSinceLastLook();
      rig.clock.increment(60_000);
      await settle();
      expect(rig.acceptedSinceLastLook()).toEqual([]);
    },
  },
});
