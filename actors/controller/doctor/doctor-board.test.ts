import type { DoctorReport, ProbeResult } from '../../../schema/doctor';
import { DoctorBoard } from './doctor-board';

// What the serving controller's log and status say of the doctor's runs, run after run.

const pass = (probe: string): ProbeResult => ({ probe, verdict: 'pass', detail: 'fine', next: null });
const fail = (probe: string, detail: string): ProbeResult => ({ probe, verdict: 'fail', detail, next: 'mend it' });
const run = (at: string, probes: ProbeResult[]): DoctorReport => ({ at, source: 'serving', ok: probes.every((probe) => probe.verdict === 'pass'), probes });

describe('DoctorBoard', () => {
  test('logs a failing probe once while it fails the same way, again when its detail changes, and once when it passes again', () => {
    const lines: string[] = [];
    let changes = 0;
    const board = new DoctorBoard((line) => lines.push(line), () => (changes += 1));
    board.publish(run('2026-12-03T12:00:00.000Z', [fail('store', 'not applied: 0053'), pass('broker')]));
    board.publish(run('2026-12-03T12:05:00.000Z', [fail('store', 'not applied: 0053'), pass('broker')]));
    board.publish(run('2026-12-03T12:10:00.000Z', [fail('store', 'not applied: 0053'), pass('broker')]));
    expect(lines).toEqual(['doctor: store fail: not applied: 0053; next: mend it']);
    board.publish(run('2026-12-03T12:15:00.000Z', [fail('store', 'not applied: 0052, 0053'), pass('broker')]));
    board.publish(run('2026-12-03T12:20:00.000Z', [pass('store'), pass('broker')]));
    board.publish(run('2026-12-03T12:25:00.000Z', [pass('store'), pass('broker')]));
    expect(lines).toEqual([
      'doctor: store fail: not applied: 0053; next: mend it',
      'doctor: store fail: not applied: 0052, 0053; next: mend it',
      'doctor: store passes again: fine',
    ]);
    expect(changes).toBe(3);
    expect(board.summary()).toEqual({ at: '2026-12-03T12:25:00.000Z', failing: [] });
  });

  test('keeps the later run when an earlier one ends after it', () => {
    const board = new DoctorBoard(() => undefined);
    expect(board.summary()).toBeNull();
    board.publish(run('2026-12-03T12:01:00.000Z', [pass('store')]));
    board.publish(run('2026-12-03T12:00:00.000Z', [fail('store', 'stale')]));
    expect(board.summary()).toEqual({ at: '2026-12-03T12:01:00.000Z', failing: [] });
  });
});
