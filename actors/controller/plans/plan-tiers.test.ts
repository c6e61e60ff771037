import { EMPTY_PLAN_CONTEXT, type PlanContext, type PlanState } from '../../../machines/plan.machine';
import { planTierStep } from './plan-tiers';

const T0 = new Date('2026-12-01T10:00:00.000Z');
const at = (seconds: number): Date => new Date(T0.getTime() + seconds * 1000);
const SENT_A = { a: { generation: 3, digest: 'd'.repeat(64), at: at(0).toISOString() } };

function row(state: PlanState, context: Partial<PlanContext> = {}): { state: PlanState; context: PlanContext } {
  return { state, context: { ...EMPTY_PLAN_CONTEXT, targets: ['a', 'b', 'c'], first: 'a', ...context } };
}

describe('a plan\'s tiers, read from its writes', () => {
  test('one-first: the first machine\'s tier runs from its send to the report that it applied, and the rest\'s from then to done', () => {
    const first = planTierStep(row('awaitingFirst', { sent: SENT_A }), row('sending', { sent: SENT_A, firstApplied: true }), at(42), undefined);
    expect(first).toEqual({ endedMs: 42_000, sendingSince: at(42) });
    const sendingOn = planTierStep(row('sending', { sent: SENT_A, firstApplied: true }), row('sending', { sent: { ...SENT_A, b: SENT_A.a }, firstApplied: true }), at(43), first.sendingSince);
    expect(sendingOn).toEqual({ sendingSince: at(42) });
    expect(planTierStep(row('sending', { firstApplied: true }), row('done', { firstApplied: true }), at(50), sendingOn.sendingSince)).toEqual({ endedMs: 8_000, sendingSince: undefined });
  });

  test('together: one tier, from entering sending to done', () => {
    const together = { policy: 'together' as const, first: null };
    const begun = planTierStep(row('opening', together), row('sending', together), at(1), undefined);
    expect(begun).toEqual({ sendingSince: at(1) });
    expect(planTierStep(row('sending', together), row('done', together), at(4), begun.sendingSince)).toEqual({ endedMs: 3_000, sendingSince: undefined });
  });

  test('a first machine that failed, a plan closed or superseded mid-tier, and a rest resumed after a restart measure nothing', () => {
    expect(planTierStep(row('awaitingFirst', { sent: SENT_A }), row('stopped', { sent: SENT_A, note: 'failed' }), at(9), undefined).endedMs).toBeUndefined();
    expect(planTierStep(row('sending', { firstApplied: true }), row('closed', { firstApplied: true }), at(9), at(1)).endedMs).toBeUndefined();
    expect(planTierStep(row('sending', { firstApplied: true }), row('superseded', { firstApplied: true }), at(9), at(1)).endedMs).toBeUndefined();
    // Resumed in `sending`: this process did not see the tier begin.
    expect(planTierStep(row('sending', { firstApplied: true }), row('done', { firstApplied: true }), at(9), undefined)).toEqual({ sendingSince: undefined });
  });

  test('a first machine resumed after a restart is still measured from its send, which the plan keeps', () => {
    expect(planTierStep(row('awaitingFirst', { sent: SENT_A }), row('done', { sent: SENT_A, firstApplied: true, targets: ['a'] }), at(30), undefined).endedMs).toBe(30_000);
  });
});
