import { coverageTable } from './coverage-table';
import type { CoverageRecord } from './harness/coverage-file';

function record(overrides: Partial<CoverageRecord['paths']>, problems: string[] = []): CoverageRecord {
  return {
    machine: 'lamp',
    states: { total: 5, covered: 5, missing: [] },
    transitions: { total: 6, covered: problems.length ? 5 : 6, missing: problems.length ? ['tripped: operator.reset [isForced] → off'] : [] },
    events_without_driver: [],
    states_without_assertion: [],
    unknown_events: [],
    unknown_states: [],
    problems,
    snapshots: 5,
    paths: { total: 4, transition_paths: 4, simple_paths: 0, simple_paths_found: 3, note: '', passed: 4, failed: 0, not_run: 0, ...overrides },
    results: [],
  };
}

describe('model coverage table', () => {
  test('shows covered of total for states and transitions, and passes a complete model', () => {
    const { text, ok } = coverageTable([record({})]);
    expect(text).toMatch(/^lamp\s+5\/5\s+6\/6\s+4\s+4\s+0\s+pass$/m);
    expect(ok).toBe(true);
  });

  test('fails a model with a failing path', () => {
    const { text, ok } = coverageTable([record({ passed: 3, failed: 1 })]);
    expect(text).toMatch(/^lamp\s+5\/5\s+6\/6\s+4\s+3\s+1\s+FAIL$/m);
    expect(ok).toBe(false);
  });

  test('fails a model that is not fully covered and says what is missing', () => {
    const { text, ok } = coverageTable([record({}, ['transitions no path takes:\n  - tripped: operator.reset [isForced] → off'])]);
    expect(text).toMatch(/5\/6/);
    expect(text).toMatch(/lamp: transitions no path takes/);
    expect(ok).toBe(false);
  });

  test('says when simple paths were capped, and calls a partly run model incomplete', () => {
    const { text, ok } = coverageTable([record({ note: 'simple paths capped: 40 of 90 run', passed: 2, not_run: 2 })]);
    expect(text).toMatch(/lamp: simple paths capped: 40 of 90 run/);
    expect(text).toMatch(/INCOMPLETE/);
    expect(ok).toBe(false);
  });
});
