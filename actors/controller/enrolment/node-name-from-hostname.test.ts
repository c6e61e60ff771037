import { NodeName } from '../../../schema/primitives';
import { nodeNameFromHostname, uniqueNodeName } from './node-name-from-hostname';

describe('a node name from a host name', () => {
  test('takes the first label, lowercased', () => {
    expect(nodeNameFromHostname('Workstation.example.com')).toBe('workstation');
  });

  test('makes every run of characters a label cannot hold one dash, and trims dashes at the ends', () => {
    expect(nodeNameFromHostname('_Build__Agent 7_')).toBe('build-agent-7');
  });

  test('falls back to "node" when nothing usable is left', () => {
    expect(nodeNameFromHostname('___')).toBe('node');
    expect(nodeNameFromHostname('.example')).toBe('node');
  });

  test('cuts a long name to 63 characters without a dash at the end', () => {
    const name = nodeNameFromHostname(`${'a'.repeat(62)}-b${'c'.repeat(10)}`);
    expect(name).toBe('a'.repeat(62));
    expect(NodeName.safeParse(name).success).toBe(true);
  });

  test('numbers a name already taken from 2 upwards', () => {
    const taken = new Set(['web', 'web-2']);
    expect(uniqueNodeName('web', (name) => taken.has(name))).toBe('web-3');
    expect(uniqueNodeName('db', (name) => taken.has(name))).toBe('db');
  });

  test('shortens a 63-character base so the numbered name is still a label', () => {
    const base = 'x'.repeat(63);
    const name = uniqueNodeName(base, (candidate) => candidate === base);
    expect(name).toBe(`${'x'.repeat(61)}-2`);
    expect(NodeName.safeParse(name).success).toBe(true);
  });
});
