import { Briefing, type BriefingStatus, briefingOutcome, formatBriefing } from './briefing';
import { expectRefused, expectRoundTrip, type RefusalCase } from './expect-contract';
import { parseContract } from './parse';

const briefing = {
  node: 'workstation',
  adopted_at: '2026-08-27T14:02:00Z',
  lines: [
    { status: 'ok', subject: 'container runtime', detail: 'docker 27.0, adopted', original_kept_at: '/var/lib/mesh-host/kept/etc/docker/daemon.json' },
    { status: 'kept', subject: 'storage driver', detail: 'machine has overlay2, the mesh wanted btrfs — machine wins' },
    { status: 'unknown', subject: 'firewall ruleset', detail: 'could not be parsed' },
    { status: 'failed', subject: 'package database', detail: 'locked by another process' },
  ],
  look_at: [
    'The storage driver disagreement is preference, not requirement, so nothing is broken.',
    'The package database was locked; nothing was installed. Re-run adoption when it is free.',
  ],
};
const [okLine, keptLine, unknownLine, failedLine] = briefing.lines;
const withLines = (...lines: object[]) => parseContract(Briefing, { ...briefing, lines }, 'briefing');

describe('the adoption briefing', () => {
  it('round-trips a briefing through JSON', () => {
    expect(expectRoundTrip(Briefing, briefing, 'briefing')).toEqual(briefing);
  });

  it('refuses a briefing that states its own outcome, saying the outcome is derived', () => {
    expectRefused(Briefing, { ...briefing, outcome: 'ok' }, 'briefing', 'briefing.outcome', /derived from the worst line/);
  });

  it.each<RefusalCase>([
    { name: 'a line status outside ok, kept, unknown and failed', input: { ...briefing, lines: [{ ...okLine, status: 'warning' }] }, path: 'briefing.lines[0].status' },
    { name: 'a line with an empty subject', input: { ...briefing, lines: [keptLine, { ...okLine, subject: '' }] }, path: 'briefing.lines[1].subject', says: /must not be empty/ },
    { name: 'a line without a detail', input: { ...briefing, lines: [{ status: 'ok', subject: 'sshd' }] }, path: 'briefing.lines[0].detail', says: /required/ },
    { name: 'an original kept at a relative path', input: { ...briefing, lines: [{ ...okLine, original_kept_at: 'kept/daemon.json' }] }, path: 'briefing.lines[0].original_kept_at', says: /absolute path/ },
    { name: 'an adoption time that is not a time', input: { ...briefing, adopted_at: 'yesterday' }, path: 'briefing.adopted_at', says: /ISO-8601/ },
    { name: 'a node name with an underscore', input: { ...briefing, node: 'work_station' }, path: 'briefing.node', says: /node name/ },
    { name: 'what to look at given as one string', input: { ...briefing, look_at: 'check the firewall' }, path: 'briefing.look_at', says: /expected array, got string/ },
  ])('refuses $name', ({ input, path, says }) => {
    expectRefused(Briefing, input, 'briefing', path, says);
  });
});

describe('briefingOutcome', () => {
  it('is ok for a briefing with no lines', () => {
    expect(briefingOutcome(withLines())).toBe('ok');
  });

  it.each<[string, object[], BriefingStatus]>([
    ['ok when every line is ok', [okLine, okLine], 'ok'],
    ['kept when the worst line is kept', [okLine, keptLine, okLine], 'kept'],
    ['unknown when the worst line is unknown', [keptLine, unknownLine, okLine], 'unknown'],
    ['failed when the worst line is failed', [okLine, failedLine, keptLine, unknownLine], 'failed'],
    ['failed when a failed line comes first', [failedLine, okLine], 'failed'],
  ])('is %s', (_name, lines, outcome) => {
    expect(briefingOutcome(withLines(...lines))).toBe(outcome);
  });
});

describe('formatBriefing', () => {
  it('prints the outcome, node, time, one row per line and what to look at', () => {
    expect(formatBriefing(parseContract(Briefing, briefing, 'briefing'))).toBe(
      [
        'outcome    failed',
        'node       workstation',
        'adopted    2026-08-27T14:02:00Z',
        '',
        '  ok       container runtime      docker 27.0, adopted; original kept at /var/lib/mesh-host/kept/etc/docker/daemon.json',
        '  kept     storage driver         machine has overlay2, the mesh wanted btrfs — machine wins',
        '  unknown  firewall ruleset       could not be parsed',
        '  failed   package database       locked by another process',
        '',
        'what to look at',
        '  The storage driver disagreement is preference, not requirement, so nothing is broken.',
        '  The package database was locked; nothing was installed. Re-run adoption when it is free.',
        '',
      ].join('\n'),
    );
  });

  it('does not repeat where the original was kept when the detail already says it', () => {
    const line = { status: 'ok', subject: 'sshd config', detail: 'adopted; original at /var/lib/mesh-host/kept/sshd_config', original_kept_at: '/var/lib/mesh-host/kept/sshd_config' };
    expect(formatBriefing(withLines(line))).toContain('  ok       sshd config            adopted; original at /var/lib/mesh-host/kept/sshd_config\n');
  });

  it('says so when there is nothing to report or look at', () => {
    const text = formatBriefing(parseContract(Briefing, { ...briefing, lines: [], look_at: [] }, 'briefing'));
    expect(text).toBe('outcome    ok\nnode       workstation\nadopted    2026-08-27T14:02:00Z\n\n  (no lines)\n\nwhat to look at\n  nothing\n');
  });
});
