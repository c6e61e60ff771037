import { setup } from 'xstate';
import { lifecycleMachine } from '../../../machines/lifecycle.machine';
import { chartModel } from './chart-model';
import { machineToMermaid } from './machine-to-mermaid';

const mermaid = machineToMermaid(chartModel(lifecycleMachine), 'machines/lifecycle.machine.ts');

describe('state chart as Mermaid', () => {
  test('is a stateDiagram-v2 that names the machine file it was drawn from', () => {
    const [header, kind] = mermaid.split('\n');
    expect(header).toBe('%% lifecycle: drawn from machines/lifecycle.machine.ts by `npm run charts`. Edit the machine, not this file.');
    expect(kind).toBe('stateDiagram-v2');
  });

  test('nests compound states with their own start, and writes inner transitions inside them', () => {
    const block = mermaid.slice(mermaid.indexOf('  state enrolled {'), mermaid.indexOf('\n  }\n'));
    expect(block).toContain('[*] --> enrolled__operating');
    expect(block).toContain('enrolled__releasing --> enrolled__retrying : release.error / recordReleaseFailure');
    expect(block).toContain('enrolled__retrying --> enrolled__releasing : after releaseRetryDelay (10 min)');
    expect(mermaid).toContain('disconnected --> enrolled__releasing : link.restored [holdsFinalDeclaration]');
    expect(mermaid).toMatch(/^ {2}enrolled --> disconnected : link\.lost/m);
  });

  test('keeps colons and semicolons out of labels, where Mermaid would read them as syntax', () => {
    for (const line of mermaid.split('\n').filter((entry) => entry.includes(' : '))) {
      expect(line.split(' : ').length).toBe(2);
      expect(line).not.toContain(';');
    }
  });

  test('points final states at the end marker', () => {
    const machine = setup({}).createMachine({ id: 'm', initial: 'a', states: { a: { on: { stop: 'b' } }, b: { type: 'final' } } });
    expect(machineToMermaid(chartModel(machine), 'x')).toContain('  b --> [*]');
  });
});
