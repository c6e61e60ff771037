import { fromPromise, setup } from 'xstate';
import { lifecycleMachine } from '../../../machines/lifecycle.machine';
import { chartModel } from './chart-model';
import { machineToDot } from './machine-to-dot';
import { renderSvg } from './render-svg';

/** The lines of the cluster drawn for `stateId`, between its opening and closing brace. */
function clusterBody(dot: string, stateId: string): string[] {
  const lines = dot.split('\n');
  const start = lines.findIndex((line) => line.trim() === `subgraph "cluster_${stateId}" {`);
  if (start < 0) return [];
  const indent = lines[start].length - lines[start].trimStart().length;
  const end = lines.findIndex((line, index) => index > start && line === `${' '.repeat(indent)}}`);
  return lines.slice(start + 1, end);
}

const declares = (lines: string[], id: string): boolean => lines.some((line) => line.trim().startsWith(`"${id}" [label=`));

const dot = machineToDot(chartModel(lifecycleMachine));

describe('state chart as DOT', () => {
  test('draws a compound state as a cluster holding its children, and nothing else', () => {
    const enrolled = clusterBody(dot, 'lifecycle.enrolled');
    for (const child of ['operating', 'releasing', 'retrying']) expect(declares(enrolled, `lifecycle.enrolled.${child}`)).toBe(true);
    for (const outside of ['unmanaged', 'hosted', 'enrolling', 'disconnected']) expect(declares(enrolled, `lifecycle.${outside}`)).toBe(false);
    expect(declares(dot.split('\n'), 'lifecycle.hosted')).toBe(true);
  });

  test('nests clusters as deep as the states nest', () => {
    const machine = setup({}).createMachine({
      id: 'deep',
      initial: 'a',
      states: { a: { initial: 'b', states: { b: { initial: 'c', states: { c: {} } } } } },
    });
    const deep = machineToDot(chartModel(machine));
    expect(clusterBody(deep, 'deep.a').some((line) => line.includes('subgraph "cluster_deep.a.b"'))).toBe(true);
    expect(declares(clusterBody(deep, 'deep.a.b'), 'deep.a.b.c')).toBe(true);
  });

  test('marks the initial state of the machine and of every compound state with a start dot', () => {
    expect(dot).toContain('"lifecycle.__start" -> "lifecycle.unmanaged"');
    expect(clusterBody(dot, 'lifecycle.enrolled')).toContain('    "lifecycle.enrolled.__start" -> "lifecycle.enrolled.operating" [arrowsize=0.6];');
  });

  describe('a compound state\'s transitions', () => {
    // A door that opens into a hall with two rooms: `hall` is left and entered as a whole, and a
    // room leads back to the hall's own initial state.
    const house = setup({}).createMachine({
      id: 'house',
      initial: 'outside',
      states: {
        outside: { on: { 'door.opened': 'hall' } },
        hall: {
          initial: 'lobby',
          on: { 'alarm.rang': 'outside', 'guide.called': '.study' },
          states: { lobby: { on: { 'stairs.climbed': 'study' } }, study: { on: { 'bell.rang': '#house.hall' } } },
        },
      },
    });
    const drawn = machineToDot(chartModel(house));
    const edgesFrom = (id: string): string[] => drawn.split('\n').filter((line) => line.trim().startsWith(`"${id}" ->`));

    test('leave and reach the state\'s border, clipped to its cluster, not its start dot', () => {
      expect(drawn).toMatch(/"house\.hall\.__border" -> "house\.outside" \[label=<alarm\.rang>, ltail="cluster_house\.hall"\]/);
      expect(drawn).toMatch(/"house\.outside" -> "house\.hall\.__border" \[label=<door\.opened>, lhead="cluster_house\.hall"\]/);
      expect(clusterBody(drawn, 'house.hall')).toContain('    "house.hall.__border" [shape=point, style=invis, width=0.01, height=0.01];');
    });

    test('leave the start dot only for the initial state; one to the state\'s own child is listed inside it', () => {
      expect(edgesFrom('house.hall.__start')).toEqual(['    "house.hall.__start" -> "house.hall.lobby" [arrowsize=0.6];']);
      expect(clusterBody(drawn, 'house.hall').find((line) => line.trim().startsWith('label=<'))).toMatch(/↻ guide\.called → study<\/font>/);
      expect(drawn).not.toMatch(/-> "house\.hall\.study" \[label=<guide\.called>/);
    });

    test('from a state inside, reach the start dot: the state is entered at its initial state', () => {
      expect(drawn).toContain('"house.hall.study" -> "house.hall.__start" [label=<bell.rang>];');
    });

    test('in the drawn SVG, only the initial arrow leaves the start dot', async () => {
      const svg = await renderSvg(drawn);
      const titles = [...svg.matchAll(/<g id="edge\d+" class="edge">\s*<title>([^<]*)<\/title>/g)].map((match) => match[1]!.replace('&#45;&gt;', '->'));
      expect(titles.filter((title) => title.startsWith('house.hall.__start->'))).toEqual(['house.hall.__start->house.hall.lobby']);
      expect(titles).toContain('house.hall.__border->house.outside');
      expect(titles).toContain('house.outside->house.hall.__border');
    });
  });

  test('labels guards, delays, invoke outcomes and actions on the edges', () => {
    expect(dot).toMatch(/"lifecycle\.disconnected" -> "lifecycle\.enrolled\.releasing" \[label=<link\.restored<br\/><font color="#2b6cb0">\[holdsFinalDeclaration\]<\/font>/);
    expect(dot).toMatch(/"lifecycle\.enrolled\.releasing" -> "lifecycle\.enrolled\.retrying" \[label=<release\.error<br\/>.*recordReleaseFailure/);
    expect(dot).toMatch(/"lifecycle\.enrolled\.retrying" -> "lifecycle\.enrolled\.releasing" \[label=<after releaseRetryDelay \(10 min\)>, style=dashed\]/);
    expect(dot).toMatch(/"lifecycle\.enrolling" -> "lifecycle\.enrolled\.__border" \[label=<enrol\.done<br\/>.*adoptIdentity.*lhead="cluster_lifecycle\.enrolled"/);
  });

  test('shows invoke ids and descriptions inside the states', () => {
    expect(dot).toMatch(/"lifecycle\.enrolling" \[label=<.*invokes: <b>enrol<\/b>.*Has the host, no identity yet\./);
  });

  test('marks final states, numeric delays and transitions that stay in their state', () => {
    const machine = setup({ actions: { note: () => {} }, actors: { job: fromPromise(async () => 1) } }).createMachine({
      id: 'job',
      initial: 'working',
      states: {
        working: {
          invoke: { id: 'job', src: 'job', onDone: 'finished' },
          after: { 5000: 'finished' },
          on: { 'job.poked': { actions: 'note' } },
        },
        finished: { type: 'final' },
      },
    });
    const drawn = machineToDot(chartModel(machine));
    expect(drawn).toMatch(/"job\.finished" \[label=<.*\(final\).*>, peripheries=2\]/);
    expect(drawn).toContain('label=<after 5 s>, style=dashed');
    expect(drawn).toMatch(/"job\.working" \[label=<.*↻ job\.poked <font color="#718096">\/ note<\/font>/);
  });

  test('the same machine gives the same SVG bytes every time', async () => {
    const first = await renderSvg(machineToDot(chartModel(lifecycleMachine)));
    const second = await renderSvg(machineToDot(chartModel(lifecycleMachine)));
    expect(second).toBe(first);
    expect(first).toMatch(/^<\?xml/);
    expect(first).not.toMatch(/Generated by/);
    expect(first).toContain('font-family="DejaVu Sans,Verdana,Helvetica,Arial,sans-serif"');
  });
});
