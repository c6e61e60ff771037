import type { ChartMachine, ChartState, ChartTransition } from './chart-model';
import { wrapWords } from './wrap-words';

/**
 * Graphviz sizes boxes from the metrics of one named font, and DejaVu Sans is among the widest
 * common sans-serif faces, so text fits in whatever face a viewer substitutes; `renderSvg`
 * widens the SVG's font-family to a fallback stack.
 */
export const CHART_FONT = 'DejaVu Sans';

/**
 * Draws a chart model as Graphviz DOT for a reader new to the machine: each compound state a
 * rounded cluster around its children, a black dot into every initial state, final states
 * with a double border, each state's description and invoked actors inside it, and on every
 * edge the event, its guard in brackets and its actions. Outcomes of invoked actors are green
 * (done) or red (error), delays dashed; transitions that stay in their state are listed inside
 * it (↻) rather than drawn as loops, whose labels Graphviz piles on top of each other, and so
 * are a compound state's transitions to its own descendants (with where they go). Edges leave
 * and reach a compound state at its border; its start dot points only at its initial state. A
 * legend under the title explains what the chart uses. The same model gives the same bytes.
 */
export function machineToDot(model: ChartMachine): string {
  const states = indexStates(model.root);
  const selfTransitions = new Map<string, ChartTransition[]>();
  const edges: ChartTransition[] = [];
  for (const transition of model.transitions) {
    // A state's transition to one of its own descendants never crosses its border, so it has no
    // border to leave from: it is listed inside the state, with where it goes, as one that stays.
    const inward = transition.source !== model.root.id && transition.target !== transition.source && isWithin(transition.target, transition.source);
    if ((transition.source === transition.target && transition.source !== model.root.id) || inward) {
      selfTransitions.set(transition.source, [...(selfTransitions.get(transition.source) ?? []), transition]);
    } else {
      edges.push(transition);
    }
  }

  const lines: string[] = [];
  const heading = `<font point-size="16"><b>${escape(model.id)}</b></font><br align="left"/>`;
  const about = model.description ? wrap(model.description, 90) : '';
  const legend = `<font point-size="9" color="#4a5568">${legendFor(model, selfTransitions.size > 0)}</font><br align="left"/>`;
  lines.push(`digraph ${quote(model.id)} {`);
  lines.push(`  graph [rankdir=${direction(model)}, compound=true, newrank=true, nodesep=0.45, ranksep=0.65, pad=0.3, fontname="${CHART_FONT}", fontsize=13, labelloc=t, labeljust=l, label=<${heading}${about}${legend}>];`);
  lines.push(`  node [shape=box, style="rounded,filled", fillcolor="#ffffff", color="#2d3748", penwidth=1.2, fontname="${CHART_FONT}", fontsize=12, margin="0.14,0.07"];`);
  lines.push(`  edge [fontname="${CHART_FONT}", fontsize=10, color="#4a5568", fontcolor="#1a202c", arrowsize=0.7];`);
  drawChildren(model.root, lines, '  ', selfTransitions);
  if (edges.some((transition) => transition.source === model.root.id)) {
    lines.push(`  ${quote(anyId(model.root.id))} [shape=plaintext, style="", label=<<i>any state</i>>, fontcolor="#4a5568"];`);
  }
  for (const group of groupEdges(edges)) lines.push(`  ${edge(group, states, model.root.id)}`);
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

const COLOURS = { event: '#1a202c', always: '#1a202c', delay: '#1a202c', done: '#2f855a', error: '#c53030' } as const;

// Left to right reads well for a handful of flat states; anything larger, or nested, grows
// too wide for a page that way and reads better top to bottom.
function direction(model: ChartMachine): 'LR' | 'TB' {
  const nested = model.root.children.some((child) => child.children.length > 0);
  return !nested && model.root.children.length <= 5 ? 'LR' : 'TB';
}

function legendFor(model: ChartMachine, hasSelfTransitions: boolean): string {
  const used = (kind: ChartTransition['kind']): boolean => model.transitions.some((transition) => transition.kind === kind);
  const items = [
    used('done') ? `<font color="${COLOURS.done}">green</font>: the invoked work finished` : '',
    used('error') ? `<font color="${COLOURS.error}">red</font>: it failed` : '',
    used('delay') ? 'dashed: after a delay' : '',
    model.transitions.some((transition) => transition.guard) ? '<font color="#2b6cb0">[guard]</font>: only when it holds' : '',
    model.transitions.some((transition) => transition.actions.length > 0) ? '<font color="#718096">/ actions</font>: what it does on the way' : '',
    hasSelfTransitions ? '↻: handled without leaving the state' : '',
  ];
  return items.filter((item) => item !== '').join(' · ');
}

function drawChildren(parent: ChartState, lines: string[], indent: string, selfTransitions: Map<string, ChartTransition[]>): void {
  if (parent.kind === 'compound' && parent.initial) {
    lines.push(`${indent}${quote(startIdOf(parent.id))} [shape=circle, style=filled, fillcolor="#1a202c", color="#1a202c", width=0.16, fixedsize=true, label=""];`);
    lines.push(`${indent}${quote(startIdOf(parent.id))} -> ${quote(parent.initial)} [arrowsize=0.6];`);
  }
  if (parent.kind === 'parallel') {
    lines.push(`${indent}${quote(startIdOf(parent.id))} [shape=point, style=invis, width=0.01];`);
  }
  for (const child of parent.children) {
    if (child.kind === 'history') continue;
    const label = stateLabel(child, selfTransitions.get(child.id) ?? []);
    if (child.children.length === 0) {
      lines.push(`${indent}${quote(child.id)} [label=<${label}>${child.kind === 'final' ? ', peripheries=2' : ''}];`);
      continue;
    }
    lines.push(`${indent}subgraph ${quote(`cluster_${child.id}`)} {`);
    const inner = `${indent}  `;
    lines.push(`${inner}label=<${label}>;`);
    lines.push(`${inner}style="rounded,filled${child.kind === 'parallel' ? ',dashed' : ''}"; fillcolor="#f4f7fb"; color="#2d3748"; penwidth=1.2; labeljust=l; margin=14;`);
    // Where the state's own edges start and end, clipped to its border (see edge()). A parallel
    // state's invisible start point serves for it.
    if (child.kind === 'compound') lines.push(`${inner}${quote(borderIdOf(child.id))} [shape=point, style=invis, width=0.01, height=0.01];`);
    drawChildren(child, lines, inner, selfTransitions);
    lines.push(`${indent}}`);
  }
}

function stateLabel(state: ChartState, selfTransitions: ChartTransition[]): string {
  const tag = state.kind === 'final' ? ' <font color="#4a5568">(final)</font>' : state.kind === 'parallel' ? ' <font color="#4a5568">(parallel)</font>' : '';
  const rows = [`<tr><td align="left"><b>${escape(state.key)}</b>${tag}</td></tr>`];
  for (const id of state.invokes) {
    rows.push(`<tr><td align="left"><font point-size="10" color="#2b6cb0">invokes: <b>${escape(id)}</b></font></td></tr>`);
  }
  if (state.description) {
    rows.push(`<tr><td align="left"><font point-size="9" color="#4a5568">${wrap(state.description, state.children.length > 0 ? 60 : 34)}</font></td></tr>`);
  }
  for (const transition of selfTransitions) {
    rows.push(`<tr><td align="left"><font point-size="9" color="${COLOURS[transition.kind]}">↻ ${inlineLabel(transition)}</font></td></tr>`);
  }
  return `<table border="0" cellborder="0" cellspacing="0" cellpadding="1">${rows.join('')}</table>`;
}

// Transitions of one kind between the same two states share one edge, one label line each,
// so a state that several events lead out of does not sprout a fan of overlapping arrows.
function groupEdges(transitions: ChartTransition[]): ChartTransition[][] {
  const groups = new Map<string, ChartTransition[]>();
  for (const transition of transitions) {
    const key = `${transition.source}\u0000${transition.target}\u0000${transition.kind}`;
    groups.set(key, [...(groups.get(key) ?? []), transition]);
  }
  return [...groups.values()];
}

function edge(group: ChartTransition[], states: Map<string, StateIndexEntry>, rootId: string): string {
  const [transition] = group;
  const source = states.get(transition.source);
  const target = states.get(transition.target);
  const attributes: string[] = [`label=<${group.map(edgeLabel).join('<br/>')}>`];
  let from = transition.source;
  let to = transition.target;
  // Graphviz draws edges between nodes, not clusters: a compound state's edges start or end at
  // an invisible node inside it and are clipped to the cluster's border, so they leave and reach
  // the state's border rather than its start dot, which only points at the initial state. When
  // a state inside the compound state targets the state itself, it enters its initial state:
  // that edge ends at the start dot. (A compound state's transitions to its own descendants are
  // listed inside it, not drawn: see machineToDot.)
  // The machine's own transitions are taken in any state, and are drawn from a node saying so.
  if (transition.source === rootId) {
    from = anyId(rootId);
  } else if (source && source.hasChildren) {
    from = borderOf(transition.source, source);
    attributes.push(`ltail=${quote(`cluster_${transition.source}`)}`);
  }
  if (target && target.hasChildren && transition.target !== rootId) {
    const crosses = !isWithin(transition.source, transition.target);
    to = crosses ? borderOf(transition.target, target) : startIdOf(transition.target);
    if (crosses) attributes.push(`lhead=${quote(`cluster_${transition.target}`)}`);
  }
  if (transition.kind === 'done' || transition.kind === 'error') {
    attributes.push(`color="${COLOURS[transition.kind]}"`, `fontcolor="${COLOURS[transition.kind]}"`);
  }
  if (transition.kind === 'delay') attributes.push('style=dashed');
  return `${quote(from)} -> ${quote(to)} [${attributes.join(', ')}];`;
}

function edgeLabel(transition: ChartTransition): string {
  const parts = [escape(transition.event)];
  if (transition.guard) parts.push(`<font color="#2b6cb0">[${escape(transition.guard)}]</font>`);
  if (transition.actions.length > 0) parts.push(`<font point-size="8" color="#718096">/ ${escape(transition.actions.join(', '))}</font>`);
  return parts.join('<br/>');
}

function inlineLabel(transition: ChartTransition): string {
  const guard = transition.guard ? ` <font color="#2b6cb0">[${escape(transition.guard)}]</font>` : '';
  const actions = transition.actions.length > 0 ? ` <font color="#718096">/ ${escape(transition.actions.join(', '))}</font>` : '';
  if (transition.target !== transition.source) {
    return `${escape(transition.event)}${guard}${actions} → ${escape(transition.target.slice(transition.source.length + 1))}`;
  }
  const reenters = transition.stays ? '' : ' <font color="#718096">(re-enters)</font>';
  return `${escape(transition.event)}${guard}${actions}${reenters}`;
}

interface StateIndexEntry {
  hasChildren: boolean;
  parallel: boolean;
}

function indexStates(root: ChartState): Map<string, StateIndexEntry> {
  const index = new Map<string, StateIndexEntry>();
  const visit = (state: ChartState): void => {
    index.set(state.id, { hasChildren: state.children.length > 0, parallel: state.kind === 'parallel' });
    state.children.forEach(visit);
  };
  visit(root);
  return index;
}

function isWithin(id: string, ancestor: string): boolean {
  return id === ancestor || id.startsWith(`${ancestor}.`);
}

function anyId(rootId: string): string {
  return `${rootId}.__any`;
}

function startIdOf(id: string): string {
  return `${id}.__start`;
}

function borderIdOf(id: string): string {
  return `${id}.__border`;
}

function borderOf(id: string, state: StateIndexEntry): string {
  return state.parallel ? startIdOf(id) : borderIdOf(id);
}

function quote(id: string): string {
  return `"${id.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

function escape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Text in lines of at most `width` characters, left-aligned, for an HTML label. */
function wrap(text: string, width: number): string {
  return wrapWords(text, width).map((part) => `${escape(part)}<br align="left"/>`).join('');
}
