import { Briefing, formatBriefing, type BriefingLine } from '../../../schema/briefing';
import { lookAtFor, RECONCILE_COMMAND, withLookAt } from './look-at';

const ok: BriefingLine = { status: 'ok', subject: 'package:docker', detail: 'already as declared; adopted, the host owns it from now on' };
const kept = (subject: string): BriefingLine => ({ status: 'kept', subject, detail: "content differs — the machine's value wins, nothing was written" });
const unknown: BriefingLine = { status: 'unknown', subject: 'file:/etc/nftables.conf', detail: 'could not be read: EACCES' };
const failed: BriefingLine = { status: 'failed', subject: 'package:nginx', detail: 'the original could not be kept, so nothing was written: ENOSPC' };

describe('lookAtFor', () => {
  test('a briefing whose lines are all ok has nothing to look at', () => {
    expect(lookAtFor([ok, ok])).toEqual([]);
    expect(lookAtFor([])).toEqual([]);
  });

  test('for kept lines, says how to let the mesh\'s value win and that nothing is broken', () => {
    const [note] = lookAtFor([ok, kept('file:/etc/docker/daemon.json')]);
    expect(note).toMatch(/^The machine's value was kept for 1 resource: file:\/etc\/docker\/daemon.json\./);
    expect(note).toContain('nothing is broken');
    expect(note).toContain('either make the machine match the declaration');
    expect(note).toContain('so the next reconcile applies the declaration');
    expect(note).toContain(`\`${RECONCILE_COMMAND}\``);
  });

  test('for unknown and failed lines, says what to check and to run reconcile again', () => {
    const notes = lookAtFor([unknown, failed]);
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(/^1 resource failed: package:nginx\. /);
    expect(notes[0]).toContain('not given work until it is resolved');
    expect(notes[0]).toContain(`then run \`${RECONCILE_COMMAND}\``);
    expect(notes[1]).toMatch(/^1 resource could not be read: file:\/etc\/nftables.conf\. /);
    expect(notes[1]).toContain(`then run \`${RECONCILE_COMMAND}\``);
  });

  test('puts the worst first, whatever the order of the lines', () => {
    const notes = lookAtFor([kept('file:/a'), unknown, ok, failed]);
    expect(notes.map((note) => note.slice(0, 20))).toEqual(['1 resource failed: p', '1 resource could not', "The machine's value "]);
  });

  test('counts every line but names only the first few', () => {
    const subjects = Array.from({ length: 8 }, (_, i) => `file:/etc/app/${i}.conf`);
    const [note] = lookAtFor(subjects.map(kept));
    expect(note).toContain('kept for 8 resources: file:/etc/app/0.conf, file:/etc/app/1.conf, file:/etc/app/2.conf, file:/etc/app/3.conf, file:/etc/app/4.conf and 3 more.');
    expect(note).not.toContain('file:/etc/app/5.conf');
  });

  test('the notes fit the briefing contract even with the longest subjects', () => {
    const long = (i: number) => `file:/${String(i).padStart(3, '0')}${'x'.repeat(110)}`.slice(0, 120);
    const lines = [...Array.from({ length: 20 }, (_, i) => kept(long(i))), { ...unknown, subject: long(99) }, { ...failed, subject: long(98) }];
    const briefing = withLookAt({ node: 'workstation', adopted_at: '2026-08-27T14:02:00Z', lines, look_at: [] });
    expect(Briefing.safeParse(briefing).success).toBe(true);
  });
});

describe('withLookAt', () => {
  test('replaces stale prose with what the lines say now', () => {
    const briefing = withLookAt({ node: 'workstation', adopted_at: '2026-08-27T14:02:00Z', lines: [ok, failed], look_at: ['everything is fine'] });
    expect(briefing.look_at).toEqual(lookAtFor([failed]));
    expect(formatBriefing(briefing)).toContain('what to look at\n  1 resource failed: package:nginx.');
  });
});
