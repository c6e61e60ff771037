/**
 * The lifecycle machine's paths, walked by the real host and the real controller.
 *
 * One mesh serves the whole file (model-tests/rigs/lifecycle-rig.ts): a real PostgreSQL, a mesh
 * directory made by `initMesh` with its nats-server running (TLS, JetStream, nkey users), and the
 * controller serving it with every part. Each path gets a machine of its own — a temporary root
 * holding only `/etc/os-release` and `/etc/hostname` — and its own tokens and node.
 *
 * - `operator.install` runs `nox-mesh-host version` and starts the host over the root (`runHost`,
 *   wired as `nox-mesh-host run --root` wires it); it says it is hosted and waits for an identity.
 * - `operator.enrol` issues a token with `mesh-control token issue --new` and runs
 *   `nox-mesh-host enrol --token` in its own process, which the rig stops (SIGSTOP) as it starts:
 *   that is `enrolling`. `enrol.done` lets it go on; the running host then links, takes the
 *   overlay and the full declaration, and applies them. `enrol.error` makes the token no good
 *   first — the controller's clock passes its expiry and the expiry sweep runs, or another machine
 *   enrols with it — and then lets it go on, to be refused for real.
 * - `link.lost` takes the node's user off the broker (the broker drops its connection at once);
 *   `link.restored` puts it back, and the host's link finds its way back by itself.
 * - `declaration.final` is `mesh-control node release NAME`. The host's removals wait at a hold
 *   in front of its appliers, which is `releasing`. `release.done` lets them go: the host removes
 *   what it owns, reports, drops its identity and is hosted again, and the controller marks the
 *   node released. `release.error` first puts a person's directory where the host wrote a file,
 *   so that removal fails for real: the host reports it, keeps its identity, and tries again at
 *   its next pass (`retrying`), which its drift timer brings (`after releaseRetryDelay`).
 *
 * The assertions read the state of the host's own lifecycle actor (the status file it keeps),
 * the machine's root, the host's store and what the host says, and the controller's listing,
 * records and reports.
 */
import type { SnapshotFrom } from 'xstate';
import type { HostState } from '../schema/host-state';
import { TokenNotAccepted } from '../actors/host/enrolment/enrol-errors';
import { ApplyFailed } from '../actors/host/appliers/applier';
import { storedDeclaration } from '../actors/host/reconcile/desired-resources';
import { lifecycleMachine } from '../machines/lifecycle.machine';
import type { LifecycleIdentity } from '../machines/lifecycle.machine';
import { afterEventType, describeModel, doneEvent, errorEvent } from './harness';
import {
  hostVersion,
  LifecycleMachine,
  LifecycleMesh,
  OBSTRUCTED_FILE,
  OVERLAY_FILES,
  RIG_DRIFT_MS,
  sleep,
  until,
} from './rigs/lifecycle-rig';

const RETRY = afterEventType('releaseRetryDelay', 'lifecycle.enrolled.retrying');
const EXPIRED = 'token expired';
const USED = 'token used by another machine';
const OVERLAY_KEYS = OVERLAY_FILES.map((file) => `file:${file}`).sort();
const OBSTRUCTED_KEY = `file:${OBSTRUCTED_FILE}`;
// One name in both samples: a node enrolled beside the running host is the same node, whichever
// of the two the model says saw it.
const NODE_NAMED = 'the name the controller gives';

// The model's release delay is the rig host's drift interval: its next pass is the retry.
const lifecycle = lifecycleMachine.provide({ delays: { releaseRetryDelay: RIG_DRIFT_MS } });
type Snapshot = SnapshotFrom<typeof lifecycle>;

interface System {
  mesh: LifecycleMesh;
  machine: LifecycleMachine;
  /** The node's broker key, once enrolled: what puts its user back on the broker. */
  nkey: string | null;
}

let mesh: LifecycleMesh | undefined;
let machines = 0;

beforeAll(async () => {
  mesh = await LifecycleMesh.start();
}, 60_000);

afterAll(async () => {
  await mesh?.stop();
});

// The enrolment under way finishes, and the running host takes the identity, links, and applies
// the overlay, then the full declaration.
async function becomeNode(system: System): Promise<void> {
  const { machine } = system;
  const outcome = await machine.finishEnrolment();
  if (!('node' in outcome)) throw new Error(`the enrolment was refused: ${outcome.condition}`);
  system.nkey = outcome.nkey;
  await until('the host to link and apply its full declaration', async () => {
    const state = await machine.store();
    return machine.linkAccount === 'up' && kindHeld(state) === 'full' && ownedKeys(state).length === OVERLAY_KEYS.length ? true : undefined;
  }, undefined, () => machine.said.join('\n'));
}

// The production lifecycle actor is where the model is: the host's own account of its state,
// from the status file it rewrites on every change. `enrolling` is the enrol process's own
// lifecycle actor, which says so in the same file; the rig stops that process before it has
// started (SIGSTOP at spawn), so here the file still holds the running host's `hosted`. The
// enrol process's `enrolling`, held at the broker, is shown by actors/host/cli/enrol.status.test.ts.
async function expectLifecycle(machine: LifecycleMachine, expected: string): Promise<void> {
  let seen: string | null = null;
  try {
    await until(`the host's lifecycle actor to be ${expected}`, async () => {
      seen = await machine.lifecycleState();
      return seen === expected ? true : undefined;
    });
  } catch {
    expect({ lifecycle: seen }).toEqual({ lifecycle: expected });
  }
}

function nodeOf(machine: LifecycleMachine): string {
  if (machine.node === null) throw new Error('this machine has not been enrolled');
  return machine.node;
}

function kindHeld(state: HostState | null): string | null {
  return state === null ? null : storedDeclaration(state)?.kind ?? null;
}

function ownedKeys(state: HostState | null): string[] {
  return (state?.owned.resources ?? []).map((resource) => resource.key).sort();
}

async function lastSeen(system: System): Promise<number | null> {
  const at = (await system.mesh.record(nodeOf(system.machine)))?.last_seen_at;
  return at === null || at === undefined ? null : new Date(at).getTime();
}

// Snapshots that behave alike are one vertex: the second release attempt and every later one
// (counting them would make the retry loop endless). The count is not asserted on the real
// host, which keeps no count: it tries again at every pass until nothing it made is left.
function serializeState(snapshot: Snapshot): string {
  return JSON.stringify([snapshot.value, { ...snapshot.context, releaseAttempts: Math.min(snapshot.context.releaseAttempts, 2) }]);
}

describeModel({
  machine: lifecycle,
  input: {},
  serializeState,
  // The transition paths already walk every transition from every kind of snapshot, repeated
  // link losses during a release included; the simple paths would add longer walks through the
  // same link cycles, each costing a real disconnection.
  simplePaths: false,
  timeoutMs: 60_000,
  async setup(): Promise<System> {
    if (mesh === undefined) throw new Error('the mesh did not start');
    machines += 1;
    return { mesh, machine: await LifecycleMachine.create(`machine-${machines}`), nkey: null };
  },
  async teardown({ machine }) {
    await machine.dispose();
  },
  events: {
    'operator.install': {
      async drive({ machine }) {
        const [version] = await Promise.all([hostVersion(), machine.install()]);
        expect(version.code).toBe(0);
        expect(JSON.parse(version.stdout)).toMatchObject({ program: 'nox-mesh-host' });
      },
    },
    'operator.enrol': {
      samples: [{ type: 'operator.enrol', token: 'printed by mesh-control token issue --new' }],
      async drive({ mesh: shared, machine }) {
        await machine.startEnrolment(await shared.issueToken());
      },
    },
    'xstate.done.actor.enrol': {
      samples: [doneEvent<LifecycleIdentity>('enrol', { node: NODE_NAMED })],
      drive: (system) => becomeNode(system),
    },
    // The running host's own view of an enrolment: an identity appears in its store. The person
    // runs `nox-mesh-host enrol` beside it, to its end; the host takes the identity and links.
    'xstate.done.actor.identity': {
      samples: [doneEvent<LifecycleIdentity>('identity', { node: NODE_NAMED })],
      async drive(system) {
        await system.machine.startEnrolment(await system.mesh.issueToken());
        await becomeNode(system);
      },
    },
    'xstate.error.actor.enrol': {
      samples: {
        [EXPIRED]: errorEvent('enrol', new TokenNotAccepted('expired')),
        [USED]: errorEvent('enrol', new TokenNotAccepted('used')),
      },
      async drive({ mesh: shared, machine }, event: { error: TokenNotAccepted }, step) {
        const token = machine.token;
        if (token === null) throw new Error('no token was issued');
        if (step.label.endsWith(`(${USED})`)) {
          const other = await machine.enrolAnotherMachine(`bystander-${machines}`, token.token);
          expect(other.code).toBe(0);
          expect(await shared.tokenUsed(token.tokenId)).toBe(true);
        } else {
          await shared.letTokensExpire();
        }
        expect(await machine.finishEnrolment()).toEqual({ condition: event.error.name, retryable: event.error.retryable });
      },
    },
    'link.lost': {
      // A removal already waiting at the hold goes on waiting while the link is down, so the
      // release can be seen going on once the link is back.
      async drive({ mesh: shared, machine }) {
        const mark = machine.said.length;
        await shared.cutLink(nodeOf(machine));
        await machine.saidSince(mark, /^the connection to the broker closed|; connecting again$/);
      },
    },
    'link.restored': {
      async drive(system, _event, step) {
        const { mesh: shared, machine, nkey } = system;
        if (nkey === null) throw new Error('the node has no key to put back');
        await shared.restoreLink(nodeOf(machine), nkey);
        await until('the host to link again', () => (machine.linkAccount === 'up' ? true : undefined), undefined, () => machine.said.join('\n'));
        // Holding a final declaration, the host goes on with the release as soon as it is back.
        if (step.to.matches({ enrolled: 'releasing' })) {
          await until('the release to go on', () => (machine.hold.waiting.length > 0 ? true : undefined));
        }
      },
    },
    'declaration.final': {
      async drive({ mesh: shared, machine }) {
        await shared.release(nodeOf(machine));
        await until('the host to start removing what it owns', () => (machine.hold.waiting.length > 0 ? true : undefined), undefined, () => machine.said.join('\n'));
      },
    },
    'xstate.done.actor.release': {
      async drive({ machine }) {
        // The person who put a directory in the way takes it away again.
        if ((await machine.look(OBSTRUCTED_FILE)) === 'directory') await machine.clear(OBSTRUCTED_FILE);
        const mark = machine.said.length;
        machine.hold.open();
        await machine.saidSince(mark, /^released: /);
        await machine.saidSince(mark, /^hosted: /);
        machine.hold.shut();
        machine.released = true;
      },
    },
    'xstate.error.actor.release': {
      samples: {
        'a directory of a person in the way': errorEvent(
          'release',
          new ApplyFailed(`left ${OBSTRUCTED_FILE} in place: a directory is there now, not the file the host wrote; remove it by hand if it is not wanted`),
        ),
      },
      async drive({ machine }) {
        if ((await machine.look(OBSTRUCTED_FILE)) !== 'directory') await machine.obstruct(OBSTRUCTED_FILE);
        const mark = machine.said.length;
        machine.hold.open();
        await machine.saidSince(mark, /^the final declaration left resources behind/);
        // A pass asked for while this one ran (the link came back) follows it at once: let it
        // fail too, then hold the next one, which the drift timer brings.
        await machine.quietFor(/^pass \(/, RIG_DRIFT_MS / 2);
        machine.hold.shut();
      },
    },
    [RETRY]: {
      async drive({ machine }) {
        await until('the host to try the release again', () => (machine.hold.waiting.length > 0 ? true : undefined), 3 * RIG_DRIFT_MS, () => machine.said.join('\n'));
      },
    },
  },
  states: {
    async unmanaged({ machine }) {
      expect(machine.hostRunning).toBe(false);
      // Nothing of ours: no program running over it, no store, nothing written.
      expect(await machine.tree()).toEqual(['/etc/', '/etc/hostname', '/etc/os-release']);
    },
    async hosted({ mesh: shared, machine }, snapshot) {
      await expectLifecycle(machine, 'hosted');
      expect(machine.hostFailure).toBeUndefined();
      expect(machine.hostRunning).toBe(true);
      expect(machine.linkAccount).toBe('none');
      expect(machine.said.at(-1)).toMatch(/^hosted: /);
      const state = await machine.store();
      expect(state?.identity ?? null).toBeNull();
      expect(state?.pins ?? null).toBeNull();
      // Waiting for an identity, the host holds no lock on its store: `enrol` can run beside it.
      expect(await machine.look('/var/lib/mesh-host/host.lock')).toBeNull();
      // A refused enrolment said why, and changed nothing at the controller.
      const refusal = snapshot.context.enrolRefusal;
      expect(machine.lastRefusal).toEqual(refusal === null ? null : { condition: refusal.condition, retryable: refusal.retryable });
      if (refusal !== null) expect(await shared.listed(machine.hostname)).toBeUndefined();
      if (machine.released) {
        const node = nodeOf(machine);
        await until('the controller to list the node released', async () => ((await shared.listedOnceAnswered(node))?.lifecycle_state === 'released' ? true : undefined));
        for (const file of OVERLAY_FILES) expect([file, await machine.look(file)]).toEqual([file, null]);
        expect(ownedKeys(state)).toEqual([]);
        expect(state?.last_declaration).toBeNull();
      }
    },
    async enrolling({ mesh: shared, machine }) {
      await expectLifecycle(machine, 'hosted');
      expect(await machine.enrolmentHeld()).toBe(true);
      expect(machine.hostRunning).toBe(true);
      expect((await machine.store())?.identity ?? null).toBeNull();
      const token = machine.token;
      if (token === null) throw new Error('no token was issued');
      expect(await shared.tokenUsed(token.tokenId)).toBe(false);
      expect(await shared.listed(machine.hostname)).toBeUndefined();
    },
    async enrolled({ mesh: shared, machine }, snapshot) {
      expect(snapshot.context.identity).not.toBeNull();
      const node = nodeOf(machine);
      const state = await machine.store();
      expect(state?.identity?.node).toBe(node);
      expect(state?.pins).toEqual({ broker_url: shared.brokerUrl, broker_fingerprint: shared.brokerFingerprint, controller_public_key: shared.controllerKey });
      expect(machine.linkAccount).toBe('up');
      expect(await shared.listed(node)).toMatchObject({ lifecycle_state: 'enrolled' });
      expect((await shared.record(node))?.nkey).toBe(state?.identity?.nkey_public);
    },
    'enrolled.operating': async (system) => {
      const { mesh: shared, machine } = system;
      await expectLifecycle(machine, 'enrolled.operating');
      expect(machine.hold.waiting).toEqual([]);
      const state = await machine.store();
      expect(kindHeld(state)).toBe('full');
      expect(ownedKeys(state)).toEqual(OVERLAY_KEYS);
      for (const file of OVERLAY_FILES) expect([file, await machine.look(file)]).toEqual([file, 'file']);
      expect((await shared.record(nodeOf(machine)))?.release_generation ?? null).toBeNull();
      // Linked as the controller sees it: the reports of the host's passes keep arriving.
      const before = await lastSeen(system);
      await until('the controller to hear from the node', async () => {
        const now = await lastSeen(system);
        return now !== null && (before === null || now > before) ? true : undefined;
      }, 4 * RIG_DRIFT_MS);
    },
    'enrolled.releasing': async ({ mesh: shared, machine }, snapshot) => {
      await expectLifecycle(machine, 'enrolled.releasing');
      expect(snapshot.context.finalDeclarationHeld).toBe(true);
      const waiting = [...machine.hold.waiting];
      expect(waiting.length).toBeGreaterThan(0);
      const state = await machine.store();
      expect(kindHeld(state)).toBe('final');
      // Each removal under way is marked in the store before the machine is touched.
      expect(state?.applying).toEqual(expect.arrayContaining(waiting));
      const record = await shared.record(nodeOf(machine));
      expect(record?.lifecycle_state).toBe('enrolled');
      expect(record?.release_generation ?? null).not.toBeNull();
    },
    'enrolled.retrying': async ({ mesh: shared, machine }, snapshot) => {
      // The drift timer (2 s here) brings the next try, which on a loaded machine may have begun
      // by the time this is read: it then waits at the hold, and only with the file in the way.
      // Otherwise the host says retrying, and nothing is being removed.
      const nextTry = machine.hold.waiting.length > 0 && machine.hold.waiting.every((key) => key === OBSTRUCTED_KEY);
      if (!nextTry || (await machine.lifecycleState()) !== 'enrolled.releasing') await expectLifecycle(machine, 'enrolled.retrying');
      expect(machine.hold.waiting.filter((key) => key !== OBSTRUCTED_KEY)).toEqual([]);
      const state = await machine.store();
      expect(kindHeld(state)).toBe('final');
      // What could be removed is gone; what could not is still the host's, and in its way.
      expect(ownedKeys(state)).toEqual([OBSTRUCTED_KEY]);
      expect(await machine.look(OBSTRUCTED_FILE)).toBe('directory');
      for (const file of OVERLAY_FILES.filter((other) => other !== OBSTRUCTED_FILE)) expect([file, await machine.look(file)]).toEqual([file, null]);
      // Reported, in the host's own words: the controller holds the release and says what is left.
      const node = nodeOf(machine);
      const held = await until('the controller to hold the release', async () => (await shared.record(node))?.release_held ?? undefined);
      expect(held).toContain(OBSTRUCTED_KEY);
      expect(await shared.latestResults(node)).toContainEqual(expect.objectContaining({
        key: OBSTRUCTED_KEY,
        outcome: 'failed',
        detail: expect.stringContaining(snapshot.context.releaseFailure?.message ?? '(no failure in the model)'),
      }));
    },
    async disconnected(system, snapshot) {
      const { machine } = system;
      await expectLifecycle(machine, 'disconnected');
      const node = nodeOf(machine);
      const state = await machine.store();
      expect(state?.identity?.node).toBe(node);
      expect(state?.pins).not.toBeNull();
      expect(machine.linkAccount).toBe('down');
      expect(kindHeld(state)).toBe(snapshot.context.finalDeclarationHeld ? 'final' : 'full');
      // Away, the host goes on holding its machine to its store, and the controller hears nothing.
      const seen = await lastSeen(system);
      const mark = machine.said.length;
      if (snapshot.context.finalDeclarationHeld) await sleep(RIG_DRIFT_MS + 300);
      else await until('a drift pass while away', () => (machine.said.slice(mark).some((line) => /^pass \(drift\)/.test(line)) ? true : undefined), 4 * RIG_DRIFT_MS);
      expect(await lastSeen(system)).toBe(seen);
      expect(machine.linkAccount).toBe('down');
    },
  },
});
