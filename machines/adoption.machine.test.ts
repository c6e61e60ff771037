import { createActor, fromPromise, initialTransition, toPromise, transition, waitFor } from 'xstate';
import type { AnyEventObject, SnapshotFrom } from 'xstate';
import { BriefingLine } from '../schema/briefing';
import { adoptionMachine, conflictSnapshotContext, conflictStateOf, couldNotRead, isReleaseOutcome, MAX_DETAIL, TAKEN, takenSnapshotContext } from './adoption.machine';
import type { AdoptionObservation, AdoptionOutcome, HandBackInput, HandBackResult, KeepOriginalInput, KeptOriginal, ReleaseOutcome } from './adoption.machine';

type Snapshot = SnapshotFrom<typeof adoptionMachine>;

const input = { subject: 'file:/etc/docker/daemon.json', originalsDir: '/var/lib/mesh-host/originals/file:%2Fetc%2Fdocker%2Fdaemon.json' };
const KEPT_AT = `${input.originalsDir}/etc/docker/daemon.json`;

const matching: AdoptionObservation = { present: true, differences: [] };
const conflicting: AdoptionObservation = { present: true, differences: ['content differs (31 bytes, declared 27)', 'mode is 0600, declared 0644'] };
const unreadable: AdoptionObservation = { present: false, differences: ['cannot read /etc/docker/daemon.json: EACCES'], unreadable: 'cannot read /etc/docker/daemon.json: EACCES' };

const observed = (observation: AdoptionObservation): AnyEventObject => ({ type: 'resource.observed', observation });
const keptAt = (at: string | null): AnyEventObject => ({ type: 'xstate.done.actor.keepOriginal', actorId: 'keepOriginal', output: at === null ? null : { at } });
const keepFailed = (error: unknown): AnyEventObject => ({ type: 'xstate.error.actor.keepOriginal', actorId: 'keepOriginal', error });

function walk(events: AnyEventObject[]): Snapshot {
  let [snapshot] = initialTransition(adoptionMachine, input);
  for (const event of events) [snapshot] = transition(adoptionMachine, snapshot, event as never);
  return snapshot;
}

function decisionOf(snapshot: Snapshot): AdoptionOutcome {
  expect(snapshot.hasTag('decided')).toBe(true);
  const decision = snapshot.context.decision;
  if (decision === null) throw new Error('no decision');
  // Every line the machine makes is one the briefing contract accepts.
  expect(BriefingLine.safeParse(decision.line).success).toBe(true);
  return decision;
}

describe('adoption machine', () => {
  test('starts looking, with nothing decided', () => {
    const snapshot = walk([]);
    expect(snapshot.value).toBe('looking');
    expect(snapshot.context.decision).toBeNull();
  });

  test('keeps the original before deciding anything about a machine that can be read', () => {
    expect(walk([observed(matching)]).value).toBe('keepingOriginal');
    expect(walk([observed(conflicting)]).value).toBe('keepingOriginal');
  });

  test('takes over a resource that already matches, naming where its original was kept', () => {
    const snapshot = walk([observed(matching), keptAt(KEPT_AT)]);
    expect(snapshot.value).toBe('taken');
    expect(decisionOf(snapshot)).toEqual({
      take: true,
      originalKeptAt: KEPT_AT,
      line: {
        status: 'ok',
        subject: 'file:/etc/docker/daemon.json',
        detail: `already as declared; adopted, the host owns it from now on; original kept at ${KEPT_AT}`,
        original_kept_at: KEPT_AT,
      },
    });
  });

  test('on conflict the machine wins: nothing taken, the difference and the kept original said', () => {
    const snapshot = walk([observed(conflicting), keptAt(KEPT_AT)]);
    expect(snapshot.value).toEqual({ conflict: 'kept' });
    const decision = decisionOf(snapshot);
    expect(decision.take).toBe(false);
    expect(decision.line.status).toBe('kept');
    expect(decision.line.detail).toBe(
      "content differs (31 bytes, declared 27); mode is 0600, declared 0644 — the machine's value wins, nothing was written; "
        + `original kept at ${KEPT_AT}`,
    );
    expect(decision.line.original_kept_at).toBe(KEPT_AT);
  });

  test('says when there was nothing to keep', () => {
    const decision = decisionOf(walk([observed(conflicting), keptAt(null)]));
    expect(decision.line.detail).toMatch(/nothing was written; nothing to keep$/);
    expect(decision.line).not.toHaveProperty('original_kept_at');
    expect(decision).not.toHaveProperty('originalKeptAt');
  });

  test('a machine that cannot be read is unknown, and no original is kept', () => {
    const snapshot = walk([observed(unreadable)]);
    expect(snapshot.value).toEqual({ conflict: 'unknown' });
    expect(decisionOf(snapshot)).toEqual({
      take: false,
      line: { status: 'unknown', subject: input.subject, detail: 'could not be read: cannot read /etc/docker/daemon.json: EACCES; nothing was kept or written' },
    });
  });

  test('a read failure while keeping the original is unknown, not failed', () => {
    const error = Object.assign(new Error('/etc/docker leads outside the root'), { couldNotRead: true });
    const snapshot = walk([observed(conflicting), keepFailed(error)]);
    expect(snapshot.value).toEqual({ conflict: 'unknown' });
    const decision = decisionOf(snapshot);
    expect(decision.take).toBe(false);
    expect(decision.line.detail).toBe('could not be read while keeping the original, so nothing was written: /etc/docker leads outside the root');
  });

  test('an original that cannot be kept fails the line, and nothing is taken even when the machine matches', () => {
    const snapshot = walk([observed(matching), keepFailed(new Error('ENOSPC: no space left on device'))]);
    expect(snapshot.value).toEqual({ conflict: 'failed' });
    expect(decisionOf(snapshot)).toEqual({
      take: false,
      line: { status: 'failed', subject: input.subject, detail: 'the original could not be kept, so nothing was written: ENOSPC: no space left on device' },
    });
  });

  test('a rejection that is not an Error is still said', () => {
    expect(decisionOf(walk([observed(matching), keepFailed('disk went away')])).line.detail).toMatch(/: disk went away$/);
  });

  test('a very long difference is shortened, and where the original went is never the part cut off', () => {
    const long: AdoptionObservation = { present: true, differences: ['x'.repeat(10_000)] };
    const decision = decisionOf(walk([observed(long), keptAt(KEPT_AT)]));
    expect(decision.line.detail.length).toBeLessThanOrEqual(MAX_DETAIL);
    expect(decision.line.detail.endsWith(`; original kept at ${KEPT_AT}`)).toBe(true);
    expect(decision.line.detail).toContain('…');
  });

  test('tells read failures from copy failures only by an explicit flag', () => {
    expect(couldNotRead({ couldNotRead: true, message: 'x' })).toBe(true);
    expect(couldNotRead({ couldNotRead: false, message: 'x' })).toBe(false);
    expect(couldNotRead(new Error('EACCES'))).toBe(false);
    expect(couldNotRead(null)).toBe(false);
  });

  test('runs as an actor: keeps the original in the directory from its input, then outputs the decision', async () => {
    const asked: string[] = [];
    const logic = adoptionMachine.provide({
      actors: {
        keepOriginal: fromPromise<KeptOriginal | null, KeepOriginalInput>(async ({ input: given }) => {
          asked.push(given.dir);
          return { at: `${given.dir}/etc/docker/daemon.json` };
        }),
      },
    });
    const actor = createActor(logic, { input });
    actor.start();
    actor.send({ type: 'resource.observed', observation: matching });
    // Taken is where the resource rests until it is released: decided, not done.
    const snapshot = await waitFor(actor, (s) => s.hasTag('decided'));
    expect(snapshot.status).toBe('active');
    const decision = snapshot.context.decision!;
    expect(asked).toEqual([input.originalsDir]);
    expect(decision.take).toBe(true);
    expect(decision.originalKeptAt).toBe(KEPT_AT);
  });

  test('does not keep anything for a machine that cannot be read', async () => {
    let asked = 0;
    const logic = adoptionMachine.provide({
      actors: { keepOriginal: fromPromise<KeptOriginal | null, KeepOriginalInput>(async () => { asked += 1; return null; }) },
    });
    const actor = createActor(logic, { input });
    actor.start();
    actor.send({ type: 'resource.observed', observation: unreadable });
    expect((await waitFor(actor, (s) => s.hasTag('decided'))).context.decision?.line.status).toBe('unknown');
    expect(asked).toBe(0);
  });

  test('the placeholder keepOriginal fails loudly, naming how to provide it', async () => {
    const actor = createActor(adoptionMachine, { input });
    actor.start();
    actor.send({ type: 'resource.observed', observation: matching });
    expect((await waitFor(actor, (s) => s.hasTag('decided'))).context.decision?.line.detail).toMatch(/provide the keepOriginal actor/);
  });

  test('documents every state and names every invoke', () => {
    const top = Object.values(adoptionMachine.root.states);
    const nodes = [...top, ...top.flatMap((node) => Object.values(node.states))];
    expect(nodes.map((node) => node.path.join('.')).sort()).toEqual([
      'conflict', 'conflict.failed', 'conflict.kept', 'conflict.unknown', 'dropped', 'handedBack', 'handingBack', 'keepingOriginal', 'looking', 'made',
      'notHandedBack', 'originalMissing', 'removed', 'removing', 'stillHeld', 'taken',
    ]);
    for (const node of nodes) {
      expect(node.description).toBeTruthy();
      for (const invoke of node.invoke) expect(invoke.id).toBe(invoke.src);
    }
  });
});

describe('adoption machine: releasing what it holds', () => {
  const released = (resuming = false): AnyEventObject => ({ type: 'resource.released', resuming });
  const handedBack = (output: HandBackResult | null): AnyEventObject => ({ type: 'xstate.done.actor.handBack', actorId: 'handBack', output });
  const handBackFailed = (error: unknown): AnyEventObject => ({ type: 'xstate.error.actor.handBack', actorId: 'handBack', error });
  const removed = (output: string): AnyEventObject => ({ type: 'xstate.done.actor.remove', actorId: 'remove', output });
  const removeFailed = (error: unknown): AnyEventObject => ({ type: 'xstate.error.actor.remove', actorId: 'remove', error });
  const takenLine = { status: 'ok' as const, subject: input.subject, detail: `adopted; original kept at ${KEPT_AT}`, original_kept_at: KEPT_AT };

  /** From `taken`, as the host restores it from its store. */
  function fromTaken(events: AnyEventObject[]): Snapshot {
    let snapshot = adoptionMachine.resolveState({ value: TAKEN, context: takenSnapshotContext(input, takenLine, KEPT_AT) });
    for (const event of events) [snapshot] = transition(adoptionMachine, snapshot, event as never);
    return snapshot;
  }

  function releaseOf(snapshot: Snapshot): ReleaseOutcome {
    expect(snapshot.status).toBe('done');
    const output = snapshot.output;
    if (output === undefined || !isReleaseOutcome(output)) throw new Error(`not a release: ${JSON.stringify(output)}`);
    if (output.line !== null) expect(BriefingLine.safeParse(output.line).success).toBe(true);
    return output;
  }

  test('a taken resource, released, is handed back from the folder its original was kept in, and keeps nothing', () => {
    expect(walk([observed(matching), keptAt(KEPT_AT), released()]).value).toBe('handingBack');
    const snapshot = fromTaken([released(), handedBack({ outcome: 'handed_back', what: 'content, mode 0640, owner 1:1' })]);
    expect(snapshot.value).toBe('handedBack');
    expect(releaseOf(snapshot)).toEqual({
      outcome: 'handed_back', held: false, line: null,
      detail: "handed back the machine's original (content, mode 0640, owner 1:1); its kept copy is removed",
    });
  });

  test('no copy left is handed back only when the host was already handing it back when it stopped', () => {
    const resumed = releaseOf(fromTaken([released(true), handedBack(null)]));
    expect(resumed).toMatchObject({ outcome: 'handed_back', held: false, line: null });
    expect(resumed.detail).toBe(`handed back the machine's original (put back before the host stopped; kept at ${KEPT_AT} until then)`);

    // Otherwise the copy was lost: said, and the resource left as it is, never claimed handed back.
    const lost = fromTaken([released(false), handedBack(null)]);
    expect(lost.value).toBe('originalMissing');
    expect(releaseOf(lost)).toMatchObject({ outcome: 'failed', held: false, line: null });
    expect(releaseOf(lost).detail).toMatch(new RegExp(`^the machine's original kept at ${KEPT_AT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is no longer there, so nothing was put back: left as it is`));
  });

  test('what is no longer the original is undone by the table, and the line stays, saying so', () => {
    const snapshot = fromTaken([released(), handedBack({ outcome: 'removed', what: 'the container there now is the host\'s; the original stays recorded' })]);
    expect(snapshot.value).toBe('notHandedBack');
    const release = releaseOf(snapshot);
    expect(release).toMatchObject({ outcome: 'removed', held: false });
    expect(release.line).toEqual({ ...takenLine, detail: release.detail });
    expect(release.detail).toBe("removed; the container there now is the host's; the original stays recorded");
  });

  test('a hand-back that fails leaves the resource held, its line as it was', () => {
    const snapshot = fromTaken([released(), handBackFailed(new Error('the record is unreadable'))]);
    expect(snapshot.value).toBe('stillHeld');
    expect(releaseOf(snapshot)).toEqual({ outcome: 'failed', held: true, line: takenLine, detail: 'could not hand it back, so it is still owned: the record is unreadable' });
  });

  test('what the host made itself is removed by the table, with no line left', () => {
    const releasedFresh = walk([released()]);
    expect(releasedFresh.value).toBe('removing');
    expect(releaseOf(walk([released(), removed('forgotten')]))).toEqual({ outcome: 'forgotten', held: false, line: null });
    const failed = walk([released(), removeFailed(new Error('EBUSY'))]);
    expect(failed.value).toBe('stillHeld');
    expect(releaseOf(failed)).toEqual({ outcome: 'failed', held: true, line: null, detail: 'could not remove it, so it is still owned: EBUSY' });
  });

  test('a conflict, unknown or failed adoption is not handed back: released, its line and copy are let go', () => {
    for (const events of [[observed(conflicting), keptAt(KEPT_AT)], [observed(unreadable)], [observed(matching), keepFailed(new Error('x'))]]) {
      const after = walk([...events, released()]);
      expect(after.value).toBe('dropped');
      const kept = events.length === 2 && events[1]?.type === 'xstate.done.actor.keepOriginal';
      expect(releaseOf(after)).toEqual({
        outcome: 'forgotten',
        detail: 'no longer declared: the host never wrote it and the machine keeps its own value, so nothing of it is held any more',
        held: false,
        line: null,
        ...(kept ? { forgetOriginalAt: KEPT_AT } : {}),
      });
    }
  });

  test('runs as an actor restored at taken: hands back from the originals folder of its input', async () => {
    const asked: string[] = [];
    const logic = adoptionMachine.provide({
      actors: {
        handBack: fromPromise<HandBackResult | null, HandBackInput>(async ({ input: given }) => {
          asked.push(given.dir);
          return { outcome: 'handed_back', what: 'content' };
        }),
      },
    });
    const snapshot = logic.resolveState({ value: TAKEN, context: takenSnapshotContext(input, takenLine, KEPT_AT) });
    const actor = createActor(logic, { input, snapshot });
    const done = toPromise(actor);
    actor.start();
    actor.send({ type: 'resource.released', resuming: false });
    expect(await done).toMatchObject({ outcome: 'handed_back', held: false });
    expect(asked).toEqual([input.originalsDir]);
  });
});

describe('adoption machine: a conflict resolved later', () => {
  const applied: AnyEventObject = { type: 'resource.applied' };
  const keptLine = { status: 'kept' as const, subject: input.subject, detail: `content differs — the machine's value wins, nothing was written; original kept at ${KEPT_AT}`, original_kept_at: KEPT_AT };

  function fromConflict(line: BriefingLine, events: AnyEventObject[]): Snapshot {
    let snapshot = adoptionMachine.resolveState({ value: conflictStateOf(line.status)!, context: conflictSnapshotContext(input, line) });
    for (const event of events) [snapshot] = transition(adoptionMachine, snapshot, event as never);
    return snapshot;
  }

  test('a kept conflict applied after all is taken as adopted, its line saying so and where the original is', () => {
    const snapshot = fromConflict(keptLine, [applied]);
    expect(snapshot.value).toBe('taken');
    const decision = decisionOf(snapshot);
    expect(decision).toMatchObject({ take: true, originalKeptAt: KEPT_AT, line: { status: 'ok', original_kept_at: KEPT_AT } });
    expect(decision.line.detail).toMatch(/^resolved \(was kept\): the machine's value was no longer there, so the declaration was applied; adopted, .*; original kept at /);
    expect(decision.line.detail).not.toMatch(/nothing was written/);
    // Then released like anything adopted: the original is handed back.
    expect(transition(adoptionMachine, snapshot, { type: 'resource.released', resuming: false } as never)[0].value).toBe('handingBack');
  });

  test('an unknown or failed conflict applied after all is the host\'s own, removed when released', () => {
    for (const status of ['unknown', 'failed'] as const) {
      const snapshot = fromConflict({ status, subject: input.subject, detail: 'nothing was written' }, [applied]);
      expect(snapshot.value).toBe('made');
      expect(decisionOf(snapshot)).toEqual({
        take: true,
        line: { status: 'ok', subject: input.subject, detail: `resolved (was ${status}): nothing of the machine's was there any more, so the host made it as declared; nothing was kept` },
      });
      expect(transition(adoptionMachine, snapshot, { type: 'resource.released', resuming: false } as never)[0].value).toBe('removing');
    }
  });

  test('a copy another resource\'s line points to is never taken as this one\'s original', () => {
    const elsewhere = '/var/lib/mesh-host/originals/file:%2Fetc%2Fother/etc/other';
    const snapshot = fromConflict({ ...keptLine, original_kept_at: elsewhere }, [applied]);
    expect(snapshot.value).toBe('made');
    expect(decisionOf(snapshot)).not.toHaveProperty('originalKeptAt');
  });

  test('an ok line is no conflict', () => {
    expect(conflictStateOf('ok')).toBeUndefined();
  });
});
