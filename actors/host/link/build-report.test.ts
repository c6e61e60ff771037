import { emptyHostState, type HostState } from '../../../schema/host-state';
import type { ResourceResult } from '../../../schema/report';
import { buildReport, type ReportFacts } from './build-report';

const owned = { resources: [{ key: 'file:/etc/motd', shape: 'file' as const, digest: 'a'.repeat(64), recorded_at: '2026-08-27T14:02:00Z' }] };
const state: HostState = { ...emptyHostState(), highest_epoch: 6, sequence: 4, report_sequence: 11, owned };
const held = { envelope: {}, applied_generation: 3, digest: 'd'.repeat(64) };
const results: ResourceResult[] = [{ key: 'file:/etc/motd', shape: 'file', outcome: 'applied', detail: 'content differs' }];

const facts = (more: Partial<ReportFacts> = {}): ReportFacts => ({
  node: 'alpha',
  state,
  reportSequence: 12,
  declaration: held,
  results,
  secondsSinceLinked: 0,
  versionRunning: '0.1.0',
  now: new Date('2026-08-27T14:05:00.250Z'),
  ...more,
});

describe('the report sent upward', () => {
  test('carries the ordering fields (epoch and sequence from the store, its own report number), the declaration answered, the results and what the host owns', () => {
    expect(buildReport(facts())).toEqual({
      node: 'alpha',
      epoch: 6,
      sequence: 4,
      report_sequence: 12,
      declaration_digest: 'd'.repeat(64),
      generation: 3,
      results,
      owned,
      version_running: '0.1.0',
      seconds_since_linked: 0,
      sent_at: '2026-08-27T14:05:00.250Z',
    });
  });

  test('with no declaration held, quotes no digest and generation 0', () => {
    expect(buildReport(facts({ declaration: null }))).toMatchObject({ declaration_digest: null, generation: 0 });
  });

  test('a refusal says why, and which generation and epoch it refused', () => {
    const report = buildReport(facts({ results: [], refused: { ok: false, reason: 'stale_epoch', detail: 'from epoch 4', generation: 9, epoch: 4 } }));
    expect(report.refused).toEqual({ reason: 'stale_epoch', generation: 9, epoch: 4, detail: 'from epoch 4' });
    expect(report.results).toEqual([]);
  });

  test('cuts long details and keeps the tail of long output, so the report stays within its contract', () => {
    const long: ResourceResult = { key: 'action:build', shape: 'action', outcome: 'failed', detail: 'x'.repeat(10_000), output: `${'y'.repeat(20_000)}the error` };
    const report = buildReport(facts({ results: [long] }));
    expect(report.results[0]?.detail).toHaveLength(4096);
    expect(report.results[0]?.output).toHaveLength(16384);
    expect(report.results[0]?.output?.endsWith('the error')).toBe(true);
  });

  test('includes the briefing when adoption left one', () => {
    const briefing = { node: 'alpha', adopted_at: '2026-08-27T14:02:00Z', lines: [{ status: 'kept' as const, subject: 'file /etc/motd', detail: 'the machine wins' }], look_at: [] };
    expect(buildReport(facts({ state: { ...state, briefing } })).briefing).toEqual(briefing);
  });
});
