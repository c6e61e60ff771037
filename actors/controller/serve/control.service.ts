import * as z from 'zod';
import { CallId } from '../../../schema/control-call';
import type { SupervisionTreeNode } from '../../shared/supervisor/describe-tree';
import { CallNotFound } from '../calls/call-errors';
import type { CallLog } from '../calls/call-log';
import { formatCall, formatCallList } from '../calls/format-calls';
import { startControlDispatcher } from '../control/control-dispatcher';
import type { VerbRegistry } from '../control/verb-registry';
import type { ControllerContext } from '../controller-context';
import { formatTree } from '../../shared/supervisor/format-tree';
import type { ControllerService, ServiceLedger } from './service-ledger';

/** The arguments of `calls`: one call by id, or the newest `limit` (20 unless given). */
export const CallsArgs = z.strictObject({
  id: CallId.optional(),
  limit: z.int().min(1, { error: 'must be at least 1' }).max(1000, { error: 'must be at most 1000' }).optional(),
});

/** What the control child is given. */
export interface ControlServiceDeps {
  ctx: ControllerContext;
  verbs: VerbRegistry;
  ledger: ServiceLedger;
  calls: CallLog;
  /** The live tree, for `tree`. */
  tree(): SupervisionTreeNode;
  /** The children whose verbs must be registered before calls are taken. */
  waitFor: readonly string[];
  /** How long an acting verb may run before its caller is answered "running". */
  answerWithinMs?: number;
  /** Told after each acting verb (status composes again). */
  onActed(verb: string): void;
  /** Told once calls are taken, with the verbs answered (the composition root logs "serving"). */
  onServing(verbs: string[]): void;
}

/**
 * The tree's `control` child: answers the operator's CLI over the broker, only while this
 * controller holds the lease (a standby answers nothing, so a call never lands on a controller
 * that may not act). Before taking calls it waits for every other child's verbs, and marks
 * `abandoned` the calls a stopped controller left running. Registers `tree` and `calls`.
 */
export function controlService(deps: ControlServiceDeps): ControllerService {
  const { ctx, verbs, ledger, calls } = deps;
  return {
    id: 'control',
    needsLease: true,
    start: async (signal) => {
      await ledger.allStarted(deps.waitFor, signal);
      const scoped = verbs.scoped('control');
      scoped.register(
        'tree',
        z.strictObject({}),
        async () => {
          const tree = deps.tree();
          return { result: tree, text: formatTree(tree) };
        },
        { query: true },
      );
      scoped.register(
        'calls',
        CallsArgs,
        async (_ctx, args) => {
          if (args.id !== undefined) {
            const call = await calls.get(args.id);
            if (call === null) throw new CallNotFound(args.id);
            return { result: call, text: formatCall(call) };
          }
          const recent = await calls.recent(args.limit ?? 20);
          return { result: { calls: recent }, text: formatCallList(recent) };
        },
        { query: true },
      );
      const abandoned = await calls.abandonStopped().catch((error: unknown) => {
        ctx.log(`calls: the calls a stopped controller left running could not be marked abandoned: ${(error as Error)?.message ?? String(error)}`, { level: 'error' });
        return [];
      });
      if (abandoned.length > 0) ctx.log(`calls: ${abandoned.length} call${abandoned.length === 1 ? '' : 's'} a stopped controller left running marked abandoned: ${abandoned.join(', ')}`, { level: 'warn', abandoned: abandoned.length });
      const dispatcher = startControlDispatcher(ctx, verbs, {
        calls,
        ...(deps.answerWithinMs === undefined ? {} : { answerWithinMs: deps.answerWithinMs }),
        onActed: deps.onActed,
      });
      deps.onServing(verbs.verbs());
      return { stop: () => dispatcher.stop(), failed: dispatcher.failed };
    },
  };
}
