import { emptyHostState, type HostState } from '../../../schema/host-state';
import { ContractViolation } from '../../../schema/parse';
import { LocalDeclaration } from '../../../schema/local-declaration';
import { parseContract } from '../../../schema/parse';
import { Resource } from '../../../schema/resource';
import { vouchParsed } from '../../../schema/vouched';
import { StateChecker } from './state-checker';

function owning(...paths: string[]): HostState {
  return {
    ...emptyHostState(),
    sequence: paths.length,
    owned: { resources: paths.map((p) => ({ key: `file:${p}`, shape: 'file' as const, digest: 'a'.repeat(64), recorded_at: '2026-12-01T00:00:00.000Z' })) },
  };
}

describe('checking states before they are written', () => {
  test('passes a state as the contract parses it, defaults applied', () => {
    const checker = new StateChecker();
    const handApplied = { shape: 'file', path: '/etc/motd', content: { text: 'hello\n' } } as unknown as HostState['local_resources'][number];
    const checked = checker.check({ ...owning('/etc/issue'), local_resources: [handApplied] });
    expect(checked.local_resources).toEqual([{ shape: 'file', path: '/etc/motd', content: { text: 'hello\n' }, mode: '0644', owner: 'root', group: 'root' }]);
    expect(checked.owned).toEqual(owning('/etc/issue').owned);
  });

  test('refuses a changed field that breaks the contract, naming it, after other states passed', () => {
    const checker = new StateChecker();
    checker.check(owning('/etc/motd'));
    expect(() => checker.check({ ...owning('/etc/motd'), sequence: -1 })).toThrow(/^host state\.sequence: /);
    expect(() => checker.check({ ...owning('/etc/motd'), sequence: -1 })).toThrow(ContractViolation);
  });

  test('checks again what a caller changed in place after it passed', () => {
    const checker = new StateChecker();
    const state = owning('/etc/motd');
    checker.check(state);
    (state.owned.resources[0] as { digest: string }).digest = 'not-a-digest';
    expect(() => checker.check(state)).toThrow(/host state\.owned\.resources\[0\]\.digest/);
  });

  test('writes a resource the declaration\'s parse gave as that parse would, and parses it again once changed in place', () => {
    const { resources } = parseContract(LocalDeclaration, { resources: [{ shape: 'file', path: '/etc/motd', content: { text: 'hello\n' } }] }, 'declaration');
    vouchParsed(Resource, resources);
    const state = { ...owning('/etc/issue'), local_resources: resources };
    expect(new StateChecker().serialize(state)).toBe(`${JSON.stringify(new StateChecker().check(structuredClone(state)), null, 2)}\n`);
    // Vouched for as it was parsed, not as it is now: the change is checked and refused.
    (resources[0] as { mode: string }).mode = 'rw-r--r--';
    expect(() => new StateChecker().check(state)).toThrow(/host state\.local_resources\[0\]/);
  });

  test('refuses a field the contract does not carry, and a field left out', () => {
    const checker = new StateChecker();
    checker.check(owning('/etc/motd'));
    expect(() => checker.check({ ...owning('/etc/motd'), extra: true } as HostState)).toThrow(/host state\.extra: unknown field/);
    const { briefing: _left, ...without } = owning('/etc/motd');
    expect(() => checker.check(without as HostState)).toThrow(/host state\.briefing: required/);
  });

  test('checks a state without its optional fields field by field, as it does a whole one', () => {
    // store_rebuilt_at is absent on nearly every host: such a state was parsed whole on every
    // save. Field by field, an unchanged field's value parsed before is handed back as it was.
    const checker = new StateChecker();
    const first = checker.check(owning('/etc/motd'));
    const second = checker.check({ ...owning('/etc/motd'), sequence: 7 });
    expect(second.owned).toBe(first.owned);
    expect(second.sequence).toBe(7);
    expect('store_rebuilt_at' in second).toBe(false);
    const rebuilt = checker.check({ ...owning('/etc/motd'), store_rebuilt_at: '2026-12-01T00:00:00.000Z' });
    expect(rebuilt.store_rebuilt_at).toBe('2026-12-01T00:00:00.000Z');
    expect(checker.serialize(owning('/etc/motd'))).toBe(`${JSON.stringify(new StateChecker().check(owning('/etc/motd')), null, 2)}\n`);
    expect(() => checker.check({ ...owning('/etc/motd'), store_rebuilt_at: 'yesterday' })).toThrow(/host state\.store_rebuilt_at/);
  });

  test('a field that failed once is checked again, not remembered as passed', () => {
    const checker = new StateChecker();
    expect(() => checker.check({ ...owning('/etc/motd'), sequence: -1 })).toThrow(ContractViolation);
    expect(checker.check(owning('/etc/motd')).sequence).toBe(1);
    expect(() => checker.check({ ...owning('/etc/motd'), sequence: -1 })).toThrow(ContractViolation);
  });

  test('writes out each state as JSON.stringify would, byte for byte, through a run of saves that change a field or two', () => {
    const checker = new StateChecker();
    const handApplied = { shape: 'file', path: '/etc/motd', content: { text: 'line one\nline two\n' } } as unknown as HostState['local_resources'][number];
    const states: HostState[] = [
      emptyHostState(),
      owning('/etc/motd'),
      owning('/etc/motd', '/etc/issue'),
      { ...owning('/etc/motd', '/etc/issue'), applying: ['file:/etc/hosts'], local_resources: [handApplied] },
      { ...owning('/etc/motd', '/etc/issue'), applying: ['file:/etc/hosts'], local_resources: [handApplied], sequence: 9 },
      { ...owning(), made_directories: ['/srv/a', '/srv/a/b'] },
      emptyHostState(),
    ];
    for (const state of states) {
      const text = checker.serialize(state);
      expect(text).toBe(`${JSON.stringify(new StateChecker().check(state), null, 2)}\n`);
      expect(JSON.parse(text)).toEqual(new StateChecker().check(state));
    }
  });

  test('refuses a key owned twice, though each entry passed on its own in an earlier state', () => {
    const checker = new StateChecker();
    checker.check(owning('/etc/motd', '/etc/issue'));
    expect(() => checker.check(owning('/etc/motd', '/etc/issue', '/etc/motd'))).toThrow(/host state\.owned\.resources/);
    expect(() => checker.serialize(owning('/etc/motd', '/etc/issue', '/etc/motd'))).toThrow(ContractViolation);
  });

  test('refuses an entry changed among many that passed, and a list that is not one', () => {
    const checker = new StateChecker();
    const many = owning(...Array.from({ length: 50 }, (_, i) => `/srv/f${i}`));
    checker.serialize(many);
    const broken = { ...many, owned: { resources: many.owned.resources.map((entry, i) => (i === 30 ? { ...entry, recorded_at: 'yesterday' } : entry)) } };
    expect(() => checker.serialize(broken)).toThrow(/host state\.owned\.resources\[30\]\.recorded_at/);
    expect(() => checker.serialize({ ...many, applying: 'file:/etc/motd' } as unknown as HostState)).toThrow(/host state\.applying/);
    expect(() => checker.serialize({ ...many, owned: { resources: [], extra: 1 } } as unknown as HostState)).toThrow(/host state\.owned/);
  });

  test('writes out long lists as JSON.stringify would, as entries are added, changed and taken away', () => {
    const checker = new StateChecker();
    const text = (path: string): HostState['local_resources'][number] => ({ shape: 'file', path, content: { text: `${path}\n` } }) as unknown as HostState['local_resources'][number];
    const states: HostState[] = [
      { ...owning('/a', '/b', '/c'), applying: ['file:/d', 'file:/e'], local_resources: [text('/a'), text('/b')] },
      { ...owning('/a', '/b', '/c', '/d'), applying: ['file:/e'], local_resources: [text('/a'), text('/b'), text('/d')] },
      { ...owning('/b', '/d'), applying: [], local_resources: [text('/d'), text('/b')] },
      { ...owning('/b', '/d', '/b2'), applying: ['file:/x', 'file:/x2'], local_resources: [] },
    ];
    for (const state of states) expect(checker.serialize(state)).toBe(`${JSON.stringify(new StateChecker().check(state), null, 2)}\n`);
  });

  test('writes nothing for a state that breaks the contract', () => {
    const checker = new StateChecker();
    checker.serialize(owning('/etc/motd'));
    expect(() => checker.serialize({ ...owning('/etc/motd'), sequence: -1 })).toThrow(ContractViolation);
    expect(() => checker.serialize({ ...owning('/etc/motd'), extra: true } as HostState)).toThrow(/host state\.extra: unknown field/);
  });
});
