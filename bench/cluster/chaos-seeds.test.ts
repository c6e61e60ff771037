import { brokenInvariant, chaosFigures, type SeedOutcome } from './chaos-seeds';

const report = (failureMessages: string[], message = '') => ({
  numPassedTests: 0,
  numFailedTests: 1,
  testResults: [{ message, assertionResults: [{ status: 'failed', failureMessages }] }],
});

describe('the chaos bench', () => {
  it('names the invariant that broke with what the wait last saw', () => {
    const message = 'Error: invariant "converged" broke: waited 600 s for every host to hold "web 6.0.0"; last seen:\nbehind: m02, m03\n    at invariant (e2e/cluster-chaos.e2e.ts:49:11)';
    expect(brokenInvariant(report([message]))).toBe('converged (waited 600 s for every host to hold "web 6.0.0"; last seen: behind: m02, m03)');
  });

  it('says the run itself failed when no invariant is named', () => {
    expect(brokenInvariant(report([], '  ● Test suite failed to run\n\n    Cannot find module \'pg\''))).toBe('the run itself: ● Test suite failed to run');
  });

  it('counts converged seeds among those that ran, naming failures and seeds that could not run apart', () => {
    const outcomes: SeedOutcome[] = [
      { seed: 1, ran: true, converged: true, convergedAfterS: 12, broke: undefined, wallS: 200 },
      { seed: 2, ran: true, converged: false, convergedAfterS: undefined, broke: 'epoch order (…)', wallS: 300 },
      { seed: 3, ran: false, converged: false, convergedAfterS: undefined, broke: 'jest gave no report (exit 1 after 0 s)', wallS: 0 },
    ];
    const [count, time] = chaosFigures(outcomes, { id: 'c', group: 'cluster', label: 'c', unit: 'count' }, { id: 't', group: 'cluster', label: 't', unit: 'ms' });
    expect(count?.summary?.median).toBe(1);
    expect(count?.note).toBe('1 of 2 seeds run (1, 2) converged; seed 2: epoch order (…); could not run: seeds 3 (jest gave no report (exit 1 after 0 s)); a seed takes 250 s (median)');
    expect(time?.summary?.median).toBe(12_000);
  });
});
