import { NotActing } from '../lease/lease-errors';
import { STORE_KINDS, useTestStore } from '../store/testing/use-test-store';
import type { SqlStore } from '../store/sql-store';
import { checkHandAct } from './hand-act-args';
import { HandActConditionInvalid, HandActWhyInvalid, HandActWhyMissing } from './hand-act-errors';
import { countHandActs, listHandActs, repeatedCauses } from './hand-acts.repo';
import { HAND_ACTS_KEPT_MS, keepHandAct, recordHandAct, type HandAct } from './record-hand-act';

const T0 = new Date('2026-12-01T10:00:00.000Z');
const at = (minutes: number): Date => new Date(T0.getTime() + minutes * 60_000);

describe('checking a hand act\'s reason before the act', () => {
  test('a verb that must say why refuses to go on without it, naming the way to give it', () => {
    expect(() => checkHandAct('push', {}, { example: 'mesh-control push alpha --why "disk replaced"' })).toThrow(HandActWhyMissing);
    expect(() => checkHandAct('push', {}, { example: 'mesh-control push alpha --why "disk replaced"' })).toThrow(/--why is required; nothing was done/);
  });

  test('a reason that is blank, longer than a line allows, or more than one line is refused quoting it', () => {
    for (const why of ['', '   ', 'x'.repeat(501), 'first line\nsecond line', 'carriage\rreturn']) {
      let thrown: unknown;
      try {
        checkHandAct('plans close', { why }, false);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(HandActWhyInvalid);
      expect((thrown as HandActWhyInvalid).value).toBe(why);
    }
  });

  test('a condition id that could be anything else (a path, a space, a subject wildcard, too long) is refused', () => {
    for (const condition of ['../etc/passwd', 'two words', 'mesh.>', '*', '-leading', 'x'.repeat(129), '']) {
      expect(() => checkHandAct('node revoke', { condition }, false)).toThrow(HandActConditionInvalid);
    }
  });

  test('a reason is kept trimmed, and an optional one may be left out', () => {
    expect(checkHandAct('push', { why: '  disk replaced  ', condition: 'heartbeat-missing.alpha' }, { example: '' })).toEqual({ why: 'disk replaced', condition: 'heartbeat-missing.alpha' });
    expect(checkHandAct('plans retry', {}, false)).toEqual({ why: null, condition: null });
  });
});

describe.each(STORE_KINDS)('the hand-act log on %s', (kind) => {
  const t = useTestStore(kind);
  let clock = T0;
  const ctx = (): { store: SqlStore; now: () => Date; epoch: () => number; log: (line: string) => void } => ({ store: t.store, now: () => clock, epoch: () => 7, log: () => undefined });
  const act = (verb: string, why: string | null, extra: Partial<HandAct> = {}): HandAct => ({ verb, subject: null, why, condition: null, ...extra });
  async function recordAt(minutes: number, handAct: HandAct): Promise<void> {
    clock = at(minutes);
    await recordHandAct(ctx(), handAct);
  }

  beforeEach(async () => {
    await t.store.query('DELETE FROM hand_acts');
  });

  test('keeps each act with when, the controller, the epoch and the person\'s words, and lists them newest first', async () => {
    clock = at(1);
    const first = await recordHandAct(ctx(), act('push', 'disk replaced', { subject: 'alpha' }));
    expect(first).toMatchObject({ at: at(1).toISOString(), verb: 'push', subject: 'alpha', why: 'disk replaced', condition: null, epoch: 7 });
    expect(first.controller).toMatch(/^.+:\d+$/);
    await recordAt(2, act('plans.close', null, { subject: 'plan 4', condition: 'plan-tier-late.4' }));
    const listed = await listHandActs(t.store, at(0), 10);
    expect(listed.map((each) => [each.verb, each.subject])).toEqual([['plans.close', 'plan 4'], ['push', 'alpha']]);
    expect(await listHandActs(t.store, at(0), 1)).toHaveLength(1);
    expect(await listHandActs(t.store, at(2), 10)).toHaveLength(1);
  });

  test('an act recorded while the controller does not act is kept without an epoch', async () => {
    const notActing = { ...ctx(), epoch: (): number => { throw new NotActing('record a hand act', 'standing by'); } };
    expect((await recordHandAct(notActing, act('hand-act.record', 'restarted the broker'))).epoch).toBeNull();
  });

  test('the store itself refuses a reason of more than one line, whoever skipped the check', async () => {
    await expect(recordHandAct(ctx(), act('hand-act.record', 'one\ntwo'))).rejects.toThrow();
    await expect(recordHandAct(ctx(), act('hand-act.record', 'fine', { condition: 'a b' }))).rejects.toThrow();
    expect(await listHandActs(t.store, at(-1_000_000), 10)).toEqual([]);
  });

  test('a record that cannot be written does not fail the act: it is logged and said as a line to add to the answer', async () => {
    const logged: string[] = [];
    const line = await keepHandAct({ ...ctx(), log: (each) => logged.push(each) }, act('push', 'x'.repeat(600), { subject: 'alpha' }));
    expect(line).toMatch(/^\(done, but not recorded as a hand act: .*; record it with mesh-control hand-act record --why TEXT\)$/);
    expect(logged).toEqual([expect.stringMatching(/^hand-acts: push alpha was done but could not be recorded: /)]);
    expect(await keepHandAct(ctx(), act('push', 'fine', { subject: 'alpha' }))).toBeNull();
  });

  test('repeated causes: the same condition whatever was said, the same words whatever their case and spacing, most often first', async () => {
    await recordAt(1, act('push', 'Consumer gone.', { subject: 'alpha' }));
    await recordAt(2, act('hand-act.record', 'consumer   gone'));
    await recordAt(3, act('push', 'CONSUMER GONE', { subject: 'beta' }));
    await recordAt(4, act('plans.retry', 'first machine rebooted', { subject: 'plan 3', condition: 'plan-tier-late.3' }));
    await recordAt(5, act('plans.close', 'gave up on it', { subject: 'plan 3', condition: 'plan-tier-late.3' }));
    await recordAt(6, act('push', 'said once', { subject: 'gamma' }));
    await recordAt(7, act('plans.close', null, { subject: 'plan 9' }));
    await recordAt(8, act('plans.close', null, { subject: 'plan 10' }));
    expect(await repeatedCauses(t.store, at(0))).toEqual([
      { by: 'why', cause: 'Consumer gone.', count: 3, verbs: ['hand-act.record', 'push'], subjects: ['alpha', 'beta'], first_at: at(1).toISOString(), last_at: at(3).toISOString() },
      { by: 'condition', cause: 'plan-tier-late.3', count: 2, verbs: ['plans.close', 'plans.retry'], subjects: ['plan 3'], first_at: at(4).toISOString(), last_at: at(5).toISOString() },
    ]);
    // Counted within the window only: from minute 3, the consumer's cause was given once.
    expect((await repeatedCauses(t.store, at(3))).map((cause) => [cause.cause, cause.count])).toEqual([['plan-tier-late.3', 2]]);
    // Equal counts: the more recent first.
    expect((await repeatedCauses(t.store, at(2))).map((cause) => [cause.cause, cause.count])).toEqual([['plan-tier-late.3', 2], ['consumer   gone', 2]]);
  });

  test('counts the acts of a window (status counts the week\'s)', async () => {
    await recordAt(0, act('push', 'a'));
    await recordAt(60 * 24 * 6, act('push', 'b'));
    await recordAt(60 * 24 * 8, act('push', 'c'));
    expect(await countHandActs(t.store, at(60 * 24 * 1))).toBe(2);
    expect(await countHandActs(t.store, at(0))).toBe(3);
    expect(await countHandActs(t.store, at(60 * 24 * 9))).toBe(0);
  });

  test('acts older than a year are pruned as new ones are recorded', async () => {
    await recordAt(0, act('push', 'long ago'));
    await recordAt(HAND_ACTS_KEPT_MS / 60_000 - 1, act('push', 'within the year'));
    expect(await countHandActs(t.store, at(-1))).toBe(2);
    await recordAt(HAND_ACTS_KEPT_MS / 60_000 + 1, act('push', 'now'));
    expect((await listHandActs(t.store, at(-1), 10)).map((each) => each.why)).toEqual(['now', 'within the year']);
  });
});
