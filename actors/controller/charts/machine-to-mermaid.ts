import type { ChartMachine, ChartState, ChartTransition } from './chart-model';
import { wrapWords } from './wrap-words';

/**
 * Writes a chart model as a Mermaid `stateDiagram-v2`, the form GitHub draws inline in
 * Markdown: compound states as nested `state … { }` blocks with their own `[*]` start, final
 * states pointing at `[*]`, invoked actors and (for simple states) descriptions as state
 * description lines, and
 * every transition as `event [guard] / actions`, written in the innermost block holding both
 * ends. `source` names the machine file in the header comment.
 */
export function machineToMermaid(model: ChartMachine, source: string): string {
  const lines = [
    `%% ${model.id}: drawn from ${source} by \`npm run charts\`. Edit the machine, not this file.`,
    'stateDiagram-v2',
  ];
  const nested = model.root.children.some((child) => child.children.length > 0);
  lines.push(`  direction ${nested || model.root.children.length > 5 ? 'TB' : 'LR'}`);
  const ids = new Map<string, string>();
  const assign = (state: ChartState, parent: string | undefined): void => {
    ids.set(state.id, parent === undefined ? '' : parent === '' ? safeId(state.key) : `${parent}__${safeId(state.key)}`);
    for (const child of state.children) assign(child, ids.get(state.id));
  };
  assign(model.root, undefined);
  const byBlock = new Map<string, ChartTransition[]>();
  for (const transition of model.transitions) {
    const block = commonBlock(transition.source, transition.target, model.root.id);
    byBlock.set(block, [...(byBlock.get(block) ?? []), transition]);
  }
  writeBlock(model.root, lines, '  ', ids, byBlock);
  return `${lines.join('\n')}\n`;
}

function writeBlock(
  state: ChartState,
  lines: string[],
  indent: string,
  ids: Map<string, string>,
  byBlock: Map<string, ChartTransition[]>,
): void {
  if (state.kind === 'compound' && state.initial) lines.push(`${indent}[*] --> ${ids.get(state.initial)}`);
  const children = state.children.filter((child) => child.kind !== 'history');
  children.forEach((child, index) => {
    const id = ids.get(child.id) ?? child.key;
    if (index > 0 && state.kind === 'parallel') lines.push(`${indent}--`);
    if (id !== child.key) lines.push(`${indent}state "${text(child.key)}" as ${id}`);
    if (child.children.length > 0) {
      lines.push(`${indent}state ${id} {`);
      writeBlock(child, lines, `${indent}  `, ids, byBlock);
      lines.push(`${indent}}`);
    }
    for (const invoke of child.invokes) lines.push(`${indent}${id} : invokes ${text(invoke)}`);
    // Mermaid gives a composite state no room for a description; the SVG chart shows it.
    if (child.description && child.children.length === 0) {
      // One description line per chunk: Mermaid draws each on its own line and never wraps them.
      for (const line of wrapWords(text(child.description), 40)) lines.push(`${indent}${id} : ${line}`);
    }
    if (child.kind === 'final') lines.push(`${indent}${id} --> [*]`);
  });
  for (const transition of byBlock.get(state.id) ?? []) {
    lines.push(`${indent}${ids.get(transition.source)} --> ${ids.get(transition.target)} : ${text(edgeLabel(transition))}`);
  }
}

function edgeLabel(transition: ChartTransition): string {
  const guard = transition.guard ? ` [${transition.guard}]` : '';
  const actions = transition.actions.length > 0 ? ` / ${transition.actions.join(', ')}` : '';
  return `${transition.event}${guard}${actions}`;
}

// The innermost state containing both ends (the machine itself for most transitions).
function commonBlock(source: string, target: string, rootId: string): string {
  const a = source.split('.');
  const b = target.split('.');
  let shared = 0;
  while (shared < a.length && shared < b.length && a[shared] === b[shared]) shared += 1;
  // A transition within one state's own subtree belongs in that state's parent block, so
  // both ends are declared where it is written.
  const common = a.slice(0, Math.min(shared, Math.min(a.length, b.length) - 1));
  return common.length === 0 ? rootId : common.join('.');
}

function safeId(key: string): string {
  return key.replace(/[^A-Za-z0-9_]/g, '_');
}

// Mermaid reads `:` as the start of a label and `;` as the end of a statement.
function text(value: string): string {
  return value.replace(/\s*:\s*/g, ' — ').replace(/;/g, ',').replace(/\s+/g, ' ').trim();
}

