/**
 * The lifecycle machine's paths, walked by a host.
 *
 * The host's enrolment and release do not exist yet, so for now the machine runs in a real
 * XState actor whose enrol and release actors are provided by a FakeHost
 * (model-tests/fakes/fake-host.ts): a temporary root where install puts the launcher, enrol
 * writes the identity to `var/lib/mesh-host/state.json`, release removes it, and a fake link
 * and controller report `link.lost`, `link.restored` and `declaration.final`. The assertions
 * read that fake's files and records.
 *
 * The enrolment issue must switch these drivers to the real host and controller: `operator.enrol`
 * runs `nox-mesh-host enrol --token` with a token from `mesh-control token issue`, the
 * outcomes come from a real broker and controller (an expired, mistyped or refused token, a
 * fingerprint that does not match), and the assertions read the real host's store. The spec's
 * events and states stay; only the rig and the drivers change.
 */
import { createActor, SimulatedClock } from 'xstate';
import type { Actor } from 'xstate';
import { lifecycleMachine } from '../machines/lifecycle.machine';
import type { LifecycleIdentity, LifecycleSetback } from '../machines/lifecycle.machine';
import { FakeHost } from './fakes/fake-host';
import { describeModel, doneEvent, errorEvent } from './harness';

const RELEASE_RETRY_DELAY_MS = 30_000;
const TOKEN = 'MESH1-fake-token-for-model-tests';
const NODE = 'workstation';

const lifecycle = lifecycleMachine.provide({ delays: { releaseRetryDelay: RELEASE_RETRY_DELAY_MS } });

interface Rig {
  host: FakeHost;
  clock: SimulatedClock;
  actor: Actor<typeof lifecycle>;
}

/** An error as the host's actors throw them: the class name is the condition. */
function setback(condition: string, message: string, retryable = false): Error {
  return Object.assign(new Error(message), { name: condition, retryable });
}

/** Lets the fake's settled promises reach the actor before anything is checked. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function expectSetback(actual: LifecycleSetback | null, expected: LifecycleSetback | null): void {
  expect(actual).toEqual(expected);
}

describeModel({
  machine: lifecycle,
  input: {},
  async setup(): Promise<Rig> {
    const host = await FakeHost.create();
    const clock = new SimulatedClock();
    const actor = createActor(lifecycle.provide({ actors: host.logic }), { clock, input: {} });
    host.onEvent((event) => actor.send(event));
    actor.start();
    return { host, clock, actor };
  },
  async teardown({ host, actor }) {
    actor.stop();
    await host.dispose();
  },
  events: {
    'operator.install': {
      async drive({ host, actor }) {
        await host.install();
        actor.send({ type: 'operator.install' });
      },
    },
    'operator.enrol': {
      samples: [{ type: 'operator.enrol', token: TOKEN }],
      async drive({ actor }, event) {
        actor.send(event);
        await settle();
      },
    },
    'xstate.done.actor.enrol': {
      samples: [doneEvent<LifecycleIdentity>('enrol', { node: NODE })],
      async drive({ host }, event: { output: LifecycleIdentity }) {
        await host.acceptEnrolment(event.output);
        await settle();
      },
    },
    'xstate.error.actor.enrol': {
      samples: {
        'token expired': errorEvent('enrol', setback('TokenExpired', 'the token expired 3 minutes ago')),
        'token mistyped': errorEvent('enrol', setback('TokenMistyped', 'the token checksum does not match')),
        'token refused': errorEvent('enrol', setback('TokenRefused', 'the controller does not know this token')),
        'fingerprint mismatch': errorEvent('enrol', setback('FingerprintMismatch', 'the broker certificate is not the pinned one')),
        'broker unreachable': errorEvent('enrol', setback('BrokerUnreachable', 'connection refused', true)),
      },
      async drive({ host }, event: { error: unknown }) {
        host.refuseEnrolment(event.error);
        await settle();
      },
    },
    'link.lost': {
      async drive({ host }) {
        host.dropLink();
        await settle();
      },
    },
    'link.restored': {
      async drive({ host }) {
        host.restoreLink();
        await settle();
      },
    },
    'declaration.final': {
      async drive({ host }) {
        host.deliverFinal();
        await settle();
      },
    },
    'xstate.done.actor.release': {
      async drive({ host }) {
        await host.completeRelease();
        await settle();
      },
    },
    'xstate.error.actor.release': {
      samples: {
        'package database locked': errorEvent('release', setback('PackageDatabaseLocked', 'locked by another process', true)),
        'removal refused': errorEvent('release', setback('RemovalRefused', 'directory /srv/app is not empty')),
      },
      async drive({ host }, event: { error: unknown }) {
        host.failRelease(event.error);
        await settle();
      },
    },
    'xstate.after.releaseRetryDelay.lifecycle.enrolled.retrying': {
      async drive({ clock }) {
        clock.increment(RELEASE_RETRY_DELAY_MS);
        await settle();
      },
    },
  },
  states: {
    async unmanaged({ host }) {
      expect(await host.isInstalled()).toBe(false);
      expect(await host.readIdentity()).toBeNull();
    },
    async hosted({ host, actor }, snapshot) {
      expect(await host.isInstalled()).toBe(true);
      expect(await host.readIdentity()).toBeNull();
      expect(host.pendingEnrolment()).toBeNull();
      expect(host.pendingRelease()).toBeNull();
      expect(host.linked).toBe(false);
      // A refused enrolment is kept for the person who typed the token.
      expectSetback(actor.getSnapshot().context.enrolRefusal, snapshot.context.enrolRefusal);
    },
    async enrolling({ host }) {
      expect(host.pendingEnrolment()).toEqual({ token: TOKEN });
      expect(await host.readIdentity()).toBeNull();
    },
    async enrolled({ host }, snapshot) {
      expect(await host.readIdentity()).toEqual(snapshot.context.identity);
      expect(host.linked).toBe(true);
    },
    'enrolled.operating': async ({ host, actor }, snapshot) => {
      expect(host.pendingRelease()).toBeNull();
      expectSetback(actor.getSnapshot().context.releaseFailure, snapshot.context.releaseFailure);
    },
    'enrolled.releasing': async ({ host }, snapshot) => {
      expect(host.pendingRelease()).toEqual({ node: NODE });
      expect(host.releaseAttempts).toBe(snapshot.context.releaseAttempts);
    },
    'enrolled.retrying': async ({ host, actor }, snapshot) => {
      expect(host.pendingRelease()).toBeNull();
      expect(host.releaseAttempts).toBe(snapshot.context.releaseAttempts);
      expectSetback(actor.getSnapshot().context.releaseFailure, snapshot.context.releaseFailure);
    },
    async disconnected({ host }, snapshot) {
      expect(await host.readIdentity()).toEqual(snapshot.context.identity);
      expect(host.linked).toBe(false);
      // Losing the link ends a release under way; the final declaration comes again later.
      expect(host.pendingRelease()).toBeNull();
    },
  },
});
