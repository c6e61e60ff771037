import { expectRefused, expectRoundTrip, type RefusalCase } from './expect-contract';
import { Report } from './report';

const report = {
  node: 'workstation',
  epoch: 41,
  sequence: 7,
  report_sequence: 132,
  declaration_digest: '3f'.repeat(32),
  generation: 7,
  results: [
    { key: 'file:/etc/motd', shape: 'file', outcome: 'unchanged' },
    { key: 'package:htop', shape: 'package', outcome: 'applied', detail: 'installed 3.3.0-r0' },
    { key: 'action:make-overlay-ca', shape: 'action', outcome: 'failed', detail: 'exited 1', output: 'openssl: unknown option -newkey ed25519\n' },
    { key: 'container:old-web', shape: 'container', outcome: 'removed' },
    { key: 'package:nano', shape: 'package', outcome: 'forgotten' },
  ],
  owned: {
    resources: [
      { key: 'file:/etc/motd', shape: 'file', digest: 'a'.repeat(64), recorded_at: '2026-08-27T14:05:12Z' },
      { key: 'package:htop', shape: 'package', digest: 'b'.repeat(64), recorded_at: '2026-08-27T14:10:31Z' },
    ],
  },
  version_running: '0.1.0',
  seconds_since_linked: 0,
  sent_at: '2026-08-27T14:10:32.118Z',
};
const result = report.results[0];

describe('the report', () => {
  it('round-trips an apply report through JSON', () => {
    expect(expectRoundTrip(Report, report, 'report')).toEqual(report);
  });

  it('round-trips a report of a refused declaration, before any was applied', () => {
    const refusal = {
      ...report,
      declaration_digest: null,
      generation: 0,
      sequence: 0,
      results: [],
      owned: { resources: [] },
      seconds_since_linked: null,
      refused: { reason: 'stale_epoch', generation: 3, epoch: 39, detail: 'epoch 39 is older than 41, the highest seen' },
    };
    expect(expectRoundTrip(Report, refusal, 'report')).toEqual(refusal);
  });

  it('round-trips a report carrying an adoption briefing', () => {
    const briefing = {
      node: 'workstation',
      adopted_at: '2026-08-27T14:02:00Z',
      lines: [{ status: 'kept', subject: 'storage driver', detail: 'machine has overlay2 — machine wins' }],
      look_at: ['Nothing is broken.'],
    };
    expect(expectRoundTrip(Report, { ...report, briefing }, 'report')).toMatchObject({ briefing });
  });

  it.each<RefusalCase>([
    { name: 'a declaration digest that is not 64 hex digits', input: { ...report, declaration_digest: 'sha256:3f3f' }, path: 'report.declaration_digest', says: /SHA-256/ },
    { name: 'a fractional report sequence', input: { ...report, report_sequence: 1.5 }, path: 'report.report_sequence', says: /expected int/ },
    { name: 'a negative sequence', input: { ...report, sequence: -1 }, path: 'report.sequence', says: /must not be negative/ },
    { name: 'an outcome that is not one of the six', input: { ...report, results: [{ ...result, outcome: 'skipped' }] }, path: 'report.results[0].outcome' },
    { name: 'a result key for another shape', input: { ...report, results: [{ ...result, shape: 'directory' }] }, path: 'report.results[0].key', says: /starting "directory:"/ },
    { name: 'two results for one resource', input: { ...report, results: [result, result] }, path: 'report.results[1].key', says: /duplicate result for "file:\/etc\/motd"/ },
    { name: 'a detail longer than 4096 characters', input: { ...report, results: [{ ...result, detail: 'x'.repeat(4097) }] }, path: 'report.results[0].detail', says: /4096/ },
    { name: 'output longer than 16 KiB', input: { ...report, results: [{ ...result, output: 'x'.repeat(16385) }] }, path: 'report.results[0].output', says: /16384/ },
    { name: 'owned resources with a malformed digest', input: { ...report, owned: { resources: [{ ...report.owned.resources[0], digest: 'abc' }] } }, path: 'report.owned.resources[0].digest', says: /SHA-256/ },
    { name: 'a refusal with an unknown reason', input: { ...report, refused: { reason: 'felt like it' } }, path: 'report.refused.reason' },
    { name: 'a negative time since linked', input: { ...report, seconds_since_linked: -5 }, path: 'report.seconds_since_linked', says: /must not be negative/ },
    { name: 'a missing running version', input: { ...report, version_running: undefined }, path: 'report.version_running', says: /required/ },
    { name: 'an installed version beside the running one', input: { ...report, version_installed: '0.2.0' }, path: 'report.version_installed', says: /unknown field/ },
  ])('refuses $name', ({ input, path, says }) => {
    expectRefused(Report, input, 'report', path, says);
  });
});
