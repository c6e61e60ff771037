import { Command, Option } from 'clipanion';
import type { CommandResult } from '../../shared/cli/mesh-command';
import { OperatorError } from '../../shared/operator-error';
import { callController } from '../control/call-controller';
import { formatNodeList } from '../nodes/format-node-list';
import { listEveryNode } from '../nodes/list-every-node';
import { NODE_PAGE_DEFAULT, NODE_PAGE_MAX } from '../nodes/node-page-args';
import { ControllerCommand } from './controller-command';

/** `mesh-control nodes --limit` is not a whole number of nodes the controller answers in one page. */
export class NodesLimitInvalid extends OperatorError {
  constructor(given: string) {
    super(`--limit must be a whole number of nodes from 1 to ${NODE_PAGE_MAX}`, {
      value: given,
      next: `give --limit a number from 1 to ${NODE_PAGE_MAX} (e.g. --limit 100), or leave out --limit and --after to list every node`,
    });
  }
}

/** `mesh-control nodes`: every node, its state, address, version running and last contact; or one page of them. */
export class NodesCommand extends ControllerCommand {
  static override paths = [['nodes']];
  static override usage = Command.Usage({
    description: 'List the nodes: state, kind, overlay address, version running, when each was last seen and how long it was away',
    details: `
      Last contact is a fact ("last seen 4 days ago", "never seen"), not a verdict: a laptop shut for a week is doing nothing wrong. It is said beside the node's silence bound: three heartbeats of its kind (resident 30 s, episodic 5 min), past which the node is shown disconnected. AWAY says since when a disconnected node has been silent, or how long a node that came back was away.

      Nodes are listed by name. The controller answers a page at a time; without \`--after\` or \`--limit\` this asks for every page and prints the whole list. With either, it prints one page and, when more follow, the command for the next (under \`--json\`: \`next_after\`, null on the last page).
    `,
    examples: [
      ['Every node', 'mesh-control nodes'],
      ['The first 100 nodes', 'mesh-control nodes --limit 100'],
      ['The 100 nodes named after kitchen', 'mesh-control nodes --after kitchen --limit 100'],
    ],
  });

  after = Option.String('--after', { description: 'Print one page: the nodes whose names come after NAME (the last name of the page before)' });
  limit = Option.String('--limit', { description: `Print one page of at most this many nodes (default ${NODE_PAGE_DEFAULT}, at most ${NODE_PAGE_MAX})` });

  async run(): Promise<CommandResult> {
    if (this.after === undefined && this.limit === undefined) {
      const nodes = await listEveryNode((args) => callController(this.meshDir(), 'nodes.list', args));
      return { text: formatNodeList(nodes, new Date()), json: { nodes } };
    }
    const args: Record<string, unknown> = {};
    if (this.after !== undefined) args.after = this.after;
    if (this.limit !== undefined) args.limit = pageLimit(this.limit);
    const answer = await callController(this.meshDir(), 'nodes.list', args);
    return { text: answer.text, json: answer.result };
  }
}

function pageLimit(given: string): number {
  const limit = Number(given);
  if (!/^[0-9]+$/.test(given) || limit < 1 || limit > NODE_PAGE_MAX) throw new NodesLimitInvalid(given);
  return limit;
}
