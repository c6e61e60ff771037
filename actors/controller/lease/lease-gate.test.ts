import { NotActing } from './lease-errors';
import { LeaseGate } from './lease-gate';

function gateAt(start = 1_000) {
  let now = start;
  const gate = new LeaseGate(() => now);
  return { gate, advance: (ms: number) => (now += ms), at: () => now };
}

describe('LeaseGate', () => {
  test('is shut, with no epoch, before the lease was ever taken', () => {
    const { gate } = gateAt();
    expect(gate.isActing()).toBe(false);
    expect(() => gate.epoch()).toThrow(NotActing);
    expect(gate.standing()).toEqual({ state: 'standing by', epoch: null, acting_for_ms: 0, note: 'the lease has not been taken yet' });
  });

  test('is open until the deadline on the clock, and shut from then on though nobody closed it', () => {
    const { gate, advance } = gateAt();
    gate.open({ epoch: 41, revision: 44, actingUntil: 13_000 });
    expect(gate.isActing()).toBe(true);
    expect(gate.epoch()).toBe(41);
    expect(gate.heldRevision()).toBe(44);
    expect(gate.standing()).toEqual({ state: 'acting', epoch: 41, acting_for_ms: 12_000, note: null });
    advance(11_999);
    expect(gate.isActing()).toBe(true);
    advance(1);
    expect(gate.isActing()).toBe(false);
    expect(gate.standing()).toMatchObject({ state: 'quiet', epoch: 41, acting_for_ms: 0 });
    expect(gate.standing().note).toMatch(/not renewed in time; acting stopped 0 ms ago/);
    // Still held (the machine holds the key): the epoch stays, and giving back is still possible.
    expect(gate.epoch()).toBe(41);
    expect(gate.heldRevision()).toBe(44);
  });

  test('refuses to act when shut, saying what was not done and why', () => {
    const { gate } = gateAt();
    gate.note('the lease is held by ctl-b:2 (since 2026-12-01T10:00:00.000Z)');
    const error = (() => {
      try {
        gate.assertActing('send node kitchen its full declaration');
      } catch (caught) {
        return caught;
      }
      throw new Error('expected a refusal');
    })();
    expect(error).toBeInstanceOf(NotActing);
    expect((error as NotActing).message).toBe('this controller is not acting, so it did not send node kitchen its full declaration (the lease is held by ctl-b:2 (since 2026-12-01T10:00:00.000Z))');
    expect((error as NotActing).retryable).toBe(true);
  });

  test('closes at once when the lease machine leaves holding, whatever the clock says', () => {
    const { gate } = gateAt();
    gate.open({ epoch: 3, revision: 3, actingUntil: 60_000 });
    gate.close();
    expect(gate.isActing()).toBe(false);
    expect(gate.heldRevision()).toBeNull();
  });

  test('wakes those waiting for it when it opens, not before, and lets a waiter give up', async () => {
    const { gate } = gateAt();
    const woken: string[] = [];
    const first = gate.whenHeld().then(() => woken.push('first'));
    const giveUp = new AbortController();
    const abandoned = gate.whenHeld(giveUp.signal).then(() => 'woken', () => 'gave up');
    giveUp.abort();
    // Opened with a deadline already past: not a reason to act.
    gate.open({ epoch: 1, revision: 1, actingUntil: 500 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(woken).toEqual([]);
    gate.open({ epoch: 1, revision: 2, actingUntil: 9_000 });
    await first;
    expect(woken).toEqual(['first']);
    expect(await abandoned).toBe('gave up');
    await expect(gate.whenHeld()).resolves.toBeUndefined();
  });

  test('settles once, on the first outcome of the take', async () => {
    const held = gateAt();
    held.gate.open({ epoch: 1, revision: 1, actingUntil: 9_000 });
    held.gate.note('the last renewal failed');
    expect(await held.gate.settled()).toBe('held');
    const standby = gateAt();
    standby.gate.note('the lease is held by ctl-b:2');
    standby.gate.open({ epoch: 2, revision: 2, actingUntil: 9_000 });
    expect(await standby.gate.settled()).toBe('standing by');
  });

  test('says how the lease ended: given back, or lost with why', () => {
    const { gate } = gateAt();
    gate.open({ epoch: 5, revision: 6, actingUntil: 9_000 });
    gate.end('lost', 'the controller lost its lease');
    expect(gate.isActing()).toBe(false);
    expect(gate.standing()).toEqual({ state: 'lost', epoch: 5, acting_for_ms: 0, note: 'the controller lost its lease' });
  });
});
