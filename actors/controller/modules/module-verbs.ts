import type { VerbRegistry } from '../control/verb-registry';
import type { PlanBook } from '../plans/plan-book';
import { addModule, ModuleAddArgs, type ModuleAdded } from './add-module';
import { AssignArgs, assignModules, type ModulesChanged } from './assign-modules';
import { PushArgs, pushNodes, type PushedNode, type PushOutcome } from './push-nodes';
import { unassignModules } from './unassign-modules';
import { checkHandAct, HandActArgs } from '../hand-acts/hand-act-args';
import { keepHandAct } from '../hand-acts/record-hand-act';

/** The arguments of the `push` verb: PushArgs, and why (required: a push is a hand act) and the condition it answers. */
export const PushVerbArgs = PushArgs.extend(HandActArgs);

/**
 * The module verbs of the serving controller: `module.add`, `assign`, `unassign` and `push`,
 * each answering the same facts as JSON and as text. The plans they open and tell are `book`'s.
 */
export function registerModuleVerbs(verbs: VerbRegistry, book: PlanBook): void {
  verbs.register('module.add', ModuleAddArgs, async (ctx, args) => {
    const added = await addModule(ctx, book, args);
    return { result: added, text: moduleAddedText(added, book.firstReportWaitMs) };
  });
  verbs.register('assign', AssignArgs, async (ctx, args) => {
    const changed = await assignModules(ctx, args);
    return { result: changed, text: modulesChangedText(changed, 'assigned') };
  });
  verbs.register('unassign', AssignArgs, async (ctx, args) => {
    const changed = await unassignModules(ctx, args);
    return { result: changed, text: modulesChangedText(changed, 'unassigned') };
  });
  verbs.register('push', PushVerbArgs, async (ctx, { why, condition, ...args }) => {
    const reason = checkHandAct('push', { why, condition }, { example: `mesh-control push${args.node === undefined ? '' : ` ${args.node}`} --why "its disk was replaced"` });
    const outcome = await pushNodes(ctx, book, args);
    const unkept = await keepHandAct(ctx, { verb: 'push', subject: args.node ?? (args.behind === true ? 'behind' : null), ...reason });
    return { result: outcome, text: unkept === null ? pushText(outcome) : `${pushText(outcome)}\n${unkept}` };
  });
}

/** What `module add` says. */
export function moduleAddedText(added: ModuleAdded, firstReportWaitMs: number): string {
  const name = `module ${added.module} ${added.version}`;
  if (!added.added) return `${name} is registered already with this content; nothing changed`;
  const lines = [`${name} registered (upgrade policy ${added.upgrade_policy})`];
  const { plan } = added;
  if (plan === null) {
    lines.push(`no node runs an older revision; put it on a node with: mesh-control assign NODE ${added.module}`);
  } else {
    lines.push(`plan ${plan.id} opened for ${plan.targets.length} node(s) running an older revision: ${plan.targets.join(', ')}`);
    if (added.upgrade_policy === 'one-first') {
      lines.push(`first machine: ${plan.first ?? '(none)'}; the others follow once its report on the send says it applied (it has ${formatWait(firstReportWaitMs)} to report)`);
    } else if (added.upgrade_policy === 'together') {
      lines.push('every node is sent it now');
    } else {
      lines.push(`held: a node gets it when a push names it (mesh-control push NODE --why TEXT) or pushes the whole mesh (mesh-control push --why TEXT)`);
    }
    lines.push(`follow it with: mesh-control plans show ${plan.id}`);
  }
  if (added.superseded.length > 0) lines.push(`superseded: plan ${added.superseded.join(', plan ')} (the new plan holds the nodes it had not sent)`);
  return lines.join('\n');
}

/** What `assign` and `unassign` say: only what changed on their node. */
export function modulesChangedText(changed: ModulesChanged, verb: 'assigned' | 'unassigned'): string {
  const modules = (list: ModulesChanged['changed']): string => list.map((entry) => `${entry.module} ${entry.version}`).join(', ');
  const lines: string[] = [];
  if (changed.changed.length > 0) lines.push(`node ${changed.node}: ${verb} ${modules(changed.changed)}`);
  if (changed.unchanged.length > 0) lines.push(`node ${changed.node}: runs ${modules(changed.unchanged)} already; left as it is`);
  if (changed.sent !== null) lines.push(`full declaration sent as generation ${changed.sent.generation}`);
  else if (changed.changed.length > 0) lines.push(`not sent yet: ${changed.held ?? 'no reason given'}`);
  for (const told of changed.providers ?? []) {
    lines.push(told.generation === null ? `provider ${told.node}: its accepted credentials not sent yet: ${told.held ?? 'no reason given'}` : `provider ${told.node}: its accepted credentials sent as generation ${told.generation}`);
  }
  return lines.join('\n');
}

/** What `push` says; for the whole mesh, that it was the whole mesh comes first. */
export function pushText(outcome: PushOutcome): string {
  const sent = outcome.nodes.filter((node) => node.sent !== null).length;
  const header =
    outcome.scope === 'mesh'
      ? `push to the whole mesh: every node (${outcome.nodes.length}), each moved to the newest revision of every module it runs; ${sent} sent`
      : outcome.scope === 'behind'
        ? outcome.nodes.length === 0
          ? 'push --behind: no node is behind; nothing was sent'
          : `push --behind: ${outcome.nodes.length} node(s) behind what they should hold; ${sent} sent`
        : undefined;
  const lines = outcome.nodes.map((node) => (outcome.scope === 'node' ? nodeLine(node) : `  ${nodeLine(node)}`));
  return [...(header === undefined ? [] : [header]), ...lines].join('\n');
}

function nodeLine(node: PushedNode): string {
  if (node.sent === null) return `node ${node.node}: not sent: ${node.held ?? 'no reason given'}`;
  const modules = Object.entries(node.sent.modules).map(([module, version]) => {
    const move = node.moved.find((entry) => entry.module === module);
    return move === undefined ? `${module} ${version}` : `${module} ${version} (was ${move.from})`;
  });
  return `node ${node.node}: sent generation ${node.sent.generation}${modules.length === 0 ? ', no modules' : `: ${modules.join(', ')}`}`;
}

/** A wait in words: `10 min`, `45 s`. */
export function formatWait(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}
