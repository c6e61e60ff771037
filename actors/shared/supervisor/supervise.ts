import { assign, setup, type AnyActorLogic, type AnyStateMachine } from 'xstate';
import {
  isEscalationReport,
  supervisorMachine,
  type BackoffPolicy,
  type EscalationReport,
  type RestartPolicy,
  type SupervisorInput,
  type SupervisorOutput,
} from '../../../machines/supervisor.machine';
import { asSupervisedChild } from './supervised-child';

/**
 * State kept above a child so it survives the child's restarts: the supervisor holds it and hands
 * the same map to every incarnation. A child writes what the next incarnation must find (a
 * cursor, a last-seen sequence); everything else it keeps to itself and loses on a crash, which
 * is the point of restarting.
 */
export type Retained = Map<string, unknown>;

/** What every supervised child is started with: its own settings and its retained state. */
export type SupervisedInput<TSettings extends object = object> = TSettings & { retained: Retained };

/** One child of a supervisor: a name, the logic to run, and how to treat its normal exit. */
export interface ChildSpec {
  /** Unique among its siblings; names the child in the tree and in escalations. */
  id: string;
  /** Any XState actor logic: a machine, a promise or callback actor, or another `supervise(...)`. */
  logic: AnyActorLogic;
  restart: RestartPolicy;
  /** The child's own settings; it receives them with `retained` added (see SupervisedInput). */
  input?: object;
}

/** A supervisor: its children and its restart limits, and nothing else. */
export interface SupervisorSpec {
  /** The supervisor's name in the tree and in the message when it gives up. */
  name: string;
  children: readonly ChildSpec[];
  /** Restarts of any one child allowed within `windowMs`; one more and the supervisor gives up. */
  maxRestarts: number;
  /** How long a child must stay up for its earlier restarts to be forgiven (see the machine). */
  windowMs: number;
  backoff: BackoffPolicy;
}

/** The logic `supervise` returns: run it with `createActor` or `runRootSupervisor`, or nest it. */
export type SupervisorLogic = AnyStateMachine;

/** The supervisor's one command; `runRootSupervisor(...).stop()` sends it. */
export interface SupervisorStop {
  type: 'supervisor.stop';
}

interface GroupContext {
  retained: Retained;
  /** Children that ended for good (stopped, or transient and done). */
  ended: string[];
  escalation: EscalationReport | undefined;
}

const groups = new WeakMap<AnyStateMachine, SupervisorSpec>();
const slots = new WeakSet<AnyStateMachine>();

/**
 * Builds a one-for-one supervisor. Each child runs in its own slot (machines/supervisor.machine):
 * a failing child is restarted alone, after a backoff, and when one child fails more than
 * `maxRestarts` times within `windowMs` the supervisor gives up: it stops every child (their
 * cleanup runs) and ends with that child's escalation report as output. Under another supervisor
 * that report is a failure of this supervisor (see asSupervisedChild), which is restarted like
 * any child; at the root, `runRootSupervisor` turns it into a non-zero exit.
 *
 * The supervisor ends with `{ outcome: 'stopped' }` when it is sent `supervisor.stop` or when
 * every child has ended for good.
 *
 * Retained state: each child's map is kept in the supervisor's own retained map (under the
 * child's id), and a nested supervisor is itself handed a retained map by its parent. So what a
 * child keeps there survives its own restarts and the restarts of every supervisor between it
 * and the nearest one that does not restart.
 */
export function supervise(spec: SupervisorSpec): SupervisorLogic {
  assertValid(spec);
  const childSlots = spec.children.map((child) => {
    const logic = supervisorMachine.provide({ actors: { child: asSupervisedChild(child.logic) } });
    slots.add(logic);
    return { child, logic };
  });

  const slotLogic: Record<string, typeof supervisorMachine> = Object.fromEntries(childSlots.map(({ child, logic }) => [child.id, logic]));
  const machine = setup({
    actors: slotLogic,
    types: {
      context: {} as GroupContext,
      events: {} as SupervisorStop,
      input: {} as Partial<SupervisedInput> | undefined,
      output: {} as SupervisorOutput,
    },
  }).createMachine({
    id: spec.name,
    context: ({ input }) => ({
      retained: input?.retained instanceof Map ? input.retained : new Map(),
      ended: [],
      escalation: undefined,
    }),
    initial: 'supervising',
    states: {
      /** Every child runs in its own slot; a slot restarts its child without touching the others. */
      supervising: {
        invoke: childSlots.map(({ child }) => ({
          id: child.id,
          src: child.id,
          input: ({ context }: { context: GroupContext }): SupervisorInput => ({
            child: child.id,
            restart: child.restart,
            maxRestarts: spec.maxRestarts,
            windowMs: spec.windowMs,
            backoff: spec.backoff,
            childInput: { ...child.input, retained: retainedFor(context.retained, child.id) },
          }),
          onDone: [
            {
              guard: ({ event }: { event: { output: unknown } }) => isEscalationReport(event.output),
              target: 'escalated',
              actions: assign({ escalation: ({ event }) => (event as unknown as { output: EscalationReport }).output }),
            },
            {
              guard: ({ context }: { context: GroupContext }) => context.ended.length + 1 >= childSlots.length,
              target: 'stopped',
            },
            { actions: assign({ ended: ({ context }) => [...context.ended, child.id] }) },
          ],
        })),
        on: { 'supervisor.stop': { target: 'stopped' } },
      },
      /** A child failed too often: every child is stopped and the report goes up. */
      escalated: {
        type: 'final',
        output: ({ context }) => context.escalation,
      },
      /** Stopped on request, or every child ended for good. */
      stopped: {
        type: 'final',
        output: () => ({ outcome: 'stopped', child: spec.name }),
      },
    },
    output: ({ event }) => (event as unknown as { output: SupervisorOutput }).output,
  });
  groups.set(machine, spec);
  return machine;
}

/** The spec a supervisor was built from, or undefined for any other machine. */
export function supervisorSpecOf(logic: unknown): SupervisorSpec | undefined {
  return typeof logic === 'object' && logic !== null ? groups.get(logic as AnyStateMachine) : undefined;
}

/** True for the machine of one child slot made by `supervise`. */
export function isChildSlot(logic: unknown): boolean {
  return typeof logic === 'object' && logic !== null && slots.has(logic as AnyStateMachine);
}

function retainedFor(parent: Retained, childId: string): Retained {
  const key = `child:${childId}`;
  const existing = parent.get(key);
  if (existing instanceof Map) return existing as Retained;
  const fresh: Retained = new Map();
  parent.set(key, fresh);
  return fresh;
}

// The tree is code, not operator input: a mistake here is a bug, reported as one at start-up.
function assertValid(spec: SupervisorSpec): void {
  const where = `supervisor ${JSON.stringify(spec.name)}`;
  if (spec.children.length === 0) throw new RangeError(`${where} has no children: list at least one`);
  const ids = new Set<string>();
  for (const child of spec.children) {
    if (child.id === '') throw new RangeError(`${where} has a child with an empty id`);
    if (ids.has(child.id)) throw new RangeError(`${where} lists the child ${JSON.stringify(child.id)} twice: ids must be unique`);
    ids.add(child.id);
  }
  if (!Number.isInteger(spec.maxRestarts) || spec.maxRestarts < 0) {
    throw new RangeError(`${where}: maxRestarts must be a whole number ≥ 0, got ${spec.maxRestarts}`);
  }
  if (!(spec.windowMs > 0)) throw new RangeError(`${where}: windowMs must be > 0, got ${spec.windowMs}`);
  if (!(spec.backoff.baseMs >= 0) || !(spec.backoff.maxMs >= spec.backoff.baseMs)) {
    throw new RangeError(`${where}: backoff needs 0 ≤ baseMs ≤ maxMs, got ${spec.backoff.baseMs} and ${spec.backoff.maxMs}`);
  }
}
