import { failed, passed, type DoctorProbe } from './doctor-probe';
import { runProbes } from './run-probes';

// The runner's promise: a probe that cannot look is never a pass, however it fails to look.

function probe(name: string, run: DoctorProbe['run']): DoctorProbe {
  return { name, whenCannotRun: `look at ${name} by hand`, run };
}

describe('runProbes', () => {
  test('says a probe that never answers cannot run once its bound is spent, and aborts its signal', async () => {
    let aborted = false;
    const hangs = probe('hangs', (signal) => new Promise(() => signal.addEventListener('abort', () => (aborted = true))));
    const report = await runProbes([hangs, probe('quick', async () => passed('fine'))], { source: 'serving', boundMs: 200 });
    expect(report.ok).toBe(false);
    expect(report.probes[0]).toEqual({ probe: 'hangs', verdict: 'cannot-run', detail: 'did not finish within 0.2 s', next: 'look at hangs by hand' });
    expect(report.probes[1]?.verdict).toBe('pass');
    expect(aborted).toBe(true);
  });

  test('says a probe that throws, or rejects with something that is not an Error, cannot run, with why', async () => {
    const report = await runProbes([
      probe('throws', () => {
        throw new Error('connection refused');
      }),
      probe('rejects', () => Promise.reject('a string')),
    ], { source: 'directory', boundMs: 5_000 });
    expect(report.ok).toBe(false);
    expect(report.probes.map((result) => [result.probe, result.verdict, result.detail])).toEqual([
      ['throws', 'cannot-run', 'could not run: connection refused'],
      ['rejects', 'cannot-run', 'could not run: a string'],
    ]);
  });

  test('puts failures first, then what cannot run, then warnings and passes, and is ok with warnings only', async () => {
    const probes = [
      probe('a-pass', async () => passed('fine')),
      probe('a-warn', async () => ({ verdict: 'warn', detail: 'soon', next: 'act soon' })),
      probe('cannot', async () => {
        throw new Error('gone');
      }),
      probe('a-fail', async () => failed('broken', 'mend it')),
    ];
    const report = await runProbes(probes, { source: 'serving', boundMs: 5_000 });
    expect(report.probes.map((result) => result.probe)).toEqual(['a-fail', 'cannot', 'a-warn', 'a-pass']);
    expect(report.probes[0]?.next).toBe('mend it');
    expect(report.probes[3]?.next).toBeNull();
    expect(report.ok).toBe(false);
    const warnOnly = await runProbes([probes[0] as DoctorProbe, probes[1] as DoctorProbe], { source: 'serving', boundMs: 5_000 });
    expect(warnOnly.ok).toBe(true);
  });

  test('is not ok when a probe answers a pass after its bound', async () => {
    const late = probe('late', () => new Promise((resolve) => setTimeout(() => resolve(passed('fine, eventually')), 1_000)));
    const report = await runProbes([late], { source: 'serving', boundMs: 50 });
    expect(report.probes[0]?.verdict).toBe('cannot-run');
    expect(report.ok).toBe(false);
  });
});
