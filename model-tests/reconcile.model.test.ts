/**
 * The reconcile machine's paths, walked by the real reconcile actor (reconcileLogic) whose pass
 * is the real reconcilePass over a real host: the real store in a temporary state directory,
 * the real file and directory appliers and adopter over a temporary root, a declaration signed
 * by the controller key the store pins, and resources applied by hand (model-tests/rigs/
 * reconcile-rig.ts). The actor runs on a simulated clock.
 *
 * The only thing the rig adds is a hold in front of the pass (model-tests/rigs/pass-hold.ts),
 * so a path can send triggers while a pass is under way and look at the system before it
 * writes anything. Releasing the hold is how a pass ends: as things are, for done; after
 * altering the stored declaration's signed bytes, so the pass's verification refuses it, for the
 * error (the good declaration is then put back, as from a backup). The drift timer fires by
 * advancing the clock, after a person has edited the managed file by hand whenever the host
 * owns it, and the pass that follows must put it back. The assertions read the files, the
 * store, the passes the hold saw and the actor's own context.
 */
import { afterEventType, describeModel, doneEvent, errorEvent } from './harness';
import type { ModelPath } from './harness';
import { reconcileMachine } from '../machines/reconcile.machine';
import type { ReconcileContext } from '../machines/reconcile.machine';
import { DECLARATION_CONTEXT, SignatureInvalid } from '../actors/shared/crypto/envelope-errors';
import type { PassReport } from '../actors/host/reconcile/reconcile-pass';
import { resourceKey } from '../schema/resource';
import type { HeldPass } from './rigs/pass-hold';
import { BY_HAND, MOTD, RIG_DRIFT_MS, ReconcileRig } from './rigs/reconcile-rig';
import type { FullView, MachineView } from './rigs/reconcile-rig';

const DRIFT = afterEventType('driftInterval', 'reconcile.idle');

interface System {
  rig: ReconcileRig;
  /** The machine just before the last failed pass was let go. */
  beforeFailure: MachineView | null;
  /** Everything a pass could write, when the host was told to stop, and the pass it cut short. */
  atStop: { view: FullView; cutShort: HeldPass | undefined; started: number } | null;
  /** A person edited the managed file and no pass has put it back yet. */
  editedByHand: boolean;
}

/** What the machine looks like before the host has applied anything: only what it already had. */
const UNTOUCHED: MachineView = {
  files: { [MOTD]: null, '/srv/app': null, '/srv/app/app.conf': null, '/etc/timezone': 'Etc/UTC\n' },
  owned: [],
};

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function reportOf(held: HeldPass): PassReport {
  const result = held.result;
  if (result === undefined) throw new Error(`the pass for ${held.reasons.join(', ')} has not ended`);
  if ('error' in result) throw new Error(`the pass for ${held.reasons.join(', ')} failed: ${String(result.error)}`, { cause: result.error });
  return result.report;
}

function expectContext(system: System, modelled: ReconcileContext): void {
  expect(system.rig.actor.getSnapshot().context).toEqual(modelled);
}

// Snapshots that behave alike are one vertex: whether a pass has run and how the last one
// ended, none, one or several reasons pending (several: the next pass carries them all), and
// whether the pass under way is a drift pass (the rig edits the managed file before those).
// The pass count and which reasons are pending are still checked on every step, but kept in
// the vertex the count would make the graph endless, and the exact reasons would multiply it
// without adding behaviour.
function serializeState(snapshot: { value: unknown; context: ReconcileContext }): string {
  const { value, context } = snapshot;
  return JSON.stringify([
    value,
    context.passes > 0,
    context.lastError !== null,
    Math.min(context.pending.length, 2),
    value === 'applying' && context.running.includes('drift'),
  ]);
}

const plan = describeModel({
  machine: reconcileMachine,
  serializeState,
  // The graph is small but dense: its simple paths run to the tens of thousands, and the
  // transition paths already walk every transition from every kind of snapshot.
  simplePaths: false,
  async setup(): Promise<System> {
    return { rig: await ReconcileRig.create(), beforeFailure: null, atStop: null, editedByHand: false };
  },
  async teardown({ rig }) {
    await rig.dispose();
  },
  events: {
    'declaration.arrived': {
      async drive({ rig }) {
        await rig.declare();
        rig.actor.send({ type: 'declaration.arrived' });
        await settle();
      },
    },
    'host.started': {
      async drive({ rig }) {
        rig.actor.send({ type: 'host.started' });
        await settle();
      },
    },
    'link.restored': {
      async drive({ rig }) {
        rig.actor.send({ type: 'link.restored' });
        await settle();
      },
    },
    'host.stopping': {
      async drive(system) {
        const { rig } = system;
        const cutShort = rig.hold.waiting()[0];
        // Something a pass let run now would write: the managed file edited by hand, or the
        // resources not applied yet. Otherwise "the cut-short pass wrote nothing" proves nothing.
        if (await rig.editByHand()) system.editedByHand = true;
        expect(await rig.differences()).not.toEqual([]);
        const view = await rig.fullView();
        rig.actor.send({ type: 'host.stopping' });
        if (cutShort !== undefined) {
          expect(cutShort.signal.aborted).toBe(true);
          await rig.hold.release(cutShort);
        }
        system.atStop = { view, cutShort, started: rig.hold.passes.length };
        await settle();
      },
    },
    'xstate.done.actor.pass': {
      samples: [doneEvent('pass', undefined)],
      async drive(system, _event, step) {
        const { rig } = system;
        const held = rig.heldPass();
        await rig.hold.release(held);
        await settle();
        const report = reportOf(held);
        expect(report.reasons).toEqual(step.from.context.running);
        expect(report.results.filter((result) => result.outcome === 'failed')).toEqual([]);
        // Whatever the pass was for, the machine now holds what the store says.
        expect(await rig.differences()).toEqual([]);
        if (system.editedByHand && held.reasons.includes('drift')) {
          // Drift correction: the file a person edited is put back by the drift pass.
          expect(report.results).toContainEqual(expect.objectContaining({ key: `file:${MOTD}`, outcome: 'applied', detail: expect.stringMatching(/content differs/) }));
          expect(await rig.motd()).not.toBe(BY_HAND);
        }
        system.editedByHand = false;
      },
    },
    'xstate.error.actor.pass': {
      samples: {
        'stored declaration altered': errorEvent('pass', new SignatureInvalid(DECLARATION_CONTEXT, 'the signature does not match the payload')),
      },
      async drive(system) {
        const { rig } = system;
        const held = rig.heldPass();
        await rig.damageDeclaration();
        system.beforeFailure = await rig.view();
        await rig.hold.release(held);
        expect(held.result).toEqual({ error: expect.any(SignatureInvalid) });
        await rig.repairDeclaration();
        await settle();
      },
    },
    [DRIFT]: {
      async drive(system) {
        const { rig } = system;
        if (await rig.editByHand()) system.editedByHand = true;
        const started = rig.hold.passes.length;
        rig.clock.increment(RIG_DRIFT_MS - 1);
        expect(rig.hold.passes).toHaveLength(started);
        rig.clock.increment(1);
        expect(rig.hold.passes).toHaveLength(started + 1);
        await settle();
      },
    },
  },
  states: {
    async idle(system, snapshot) {
      const { rig } = system;
      expect(rig.actor.getSnapshot().value).toBe('idle');
      expectContext(system, snapshot.context);
      // No pass under way, and every pass the actor counted really ran; onPass heard each that finished.
      expect(rig.hold.unfinished()).toEqual([]);
      expect(rig.hold.passes).toHaveLength(snapshot.context.passes);
      expect(rig.heard).toEqual(rig.hold.passes.filter((held) => held.result !== undefined && 'report' in held.result).map(reportOf));
      if (snapshot.context.passes === 0) {
        expect(await rig.view()).toEqual(UNTOUCHED);
      } else if (snapshot.context.lastError === null) {
        expect(await rig.view()).toEqual(rig.convergedView());
        expect(await rig.differences()).toEqual([]);
        expect(rig.ownedKeys()).toEqual(rig.desired().map(resourceKey).sort());
        // The file the machine already had, as declared, was adopted by the real adopter.
        expect(rig.host.state.current().briefing?.lines).toEqual([expect.objectContaining({ status: 'ok', subject: 'file:/etc/timezone' })]);
      } else {
        // The failed pass refused the declaration before touching anything.
        expect(await rig.view()).toEqual(system.beforeFailure);
      }
    },
    async applying(system, snapshot) {
      const { rig } = system;
      expect(rig.actor.getSnapshot().value).toBe('applying');
      expectContext(system, snapshot.context);
      const held = rig.heldPass();
      expect(held.reasons).toEqual(snapshot.context.running);
      expect(held.signal.aborted).toBe(false);
      expect(rig.hold.passes).toHaveLength(snapshot.context.passes + 1);
      // While a pass runs the drift timer does not: a whole period later there is still one pass.
      rig.clock.increment(RIG_DRIFT_MS);
      await settle();
      expect(rig.hold.passes).toHaveLength(snapshot.context.passes + 1);
    },
    async stopped(system) {
      const { rig, atStop } = system;
      expect(rig.actor.getSnapshot().status).toBe('done');
      expect(rig.actor.getSnapshot().value).toBe('stopped');
      if (atStop === null) throw new Error('stopped without host.stopping');
      expect(rig.hold.unfinished()).toEqual([]);
      // The pass cut short ran on an aborted signal: it stopped before the first resource.
      if (atStop.cutShort !== undefined) expect(reportOf(atStop.cutShort).results).toEqual([]);
      expect(await rig.fullView()).toEqual(atStop.view);
      // Nothing runs after the stop, not even drift: the hand edit stays.
      rig.clock.increment(2 * RIG_DRIFT_MS);
      await settle();
      expect(rig.hold.passes).toHaveLength(atStop.started);
      expect(await rig.fullView()).toEqual(atStop.view);
    },
  },
});

// Drift correction must be walked for real, not just possible: a path where a pass has
// written the managed file, a person edits it, the drift timer fires and the pass finishes.
test('a generated path puts back a managed file edited by hand when the drift timer fires', () => {
  const walksDriftCorrection = (path: ModelPath<typeof reconcileMachine>): boolean =>
    path.steps.some((step, index) => {
      const next = path.steps[index + 1];
      const previous = path.steps[index - 1];
      return step.event.type === DRIFT
        && previous !== undefined && previous.snapshot.context.passes > 0 && previous.snapshot.context.lastError === null
        && next?.event.type === 'xstate.done.actor.pass';
    });
  expect(plan?.paths.filter(walksDriftCorrection).length).toBeGreaterThan(0);
});
