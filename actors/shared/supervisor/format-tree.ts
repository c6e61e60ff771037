import type { SupervisionTreeNode } from './describe-tree';

/**
 * The supervision tree for a person, one actor a line: its id, its slot's state, its own state
 * when it has one (`holding.waiting`, `waitingForLease`), and restarts and the last error once
 * it has failed.
 *
 * ```
 * controller  supervising
 * ├─ bus      running  running
 * └─ lease    running  holding.waiting
 * ```
 */
export function formatTree(root: SupervisionTreeNode): string {
  const lines = [`${root.id}  ${root.state}`];
  const walk = (node: SupervisionTreeNode, prefix: string): void => {
    const width = Math.max(0, ...node.children.map((child) => child.id.length));
    node.children.forEach((child, index) => {
      const last = index === node.children.length - 1;
      const facts = [child.state, child.child_state, child.restarts > 0 ? `${child.restarts} restart${child.restarts === 1 ? '' : 's'}` : undefined, child.last_error === undefined ? undefined : `last error: ${child.last_error}`]
        .filter((fact): fact is string => fact !== undefined && fact !== '');
      lines.push(`${prefix}${last ? '└─' : '├─'} ${child.id.padEnd(width)}  ${facts.join('  ')}`);
      walk(child, `${prefix}${last ? '   ' : '│  '}`);
    });
  };
  walk(root, '');
  return lines.join('\n');
}
