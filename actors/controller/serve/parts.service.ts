import type { VerbRegistry } from '../control/verb-registry';
import type { ControllerContext } from '../controller-context';
import type { ControllerPart, RunningPart } from './controller-parts';
import type { ControllerService, ServiceLedger } from './service-ledger';

/** A group of parts run as one child of the tree. */
export interface PartGroup {
  /** The child's id (`enrolment`, `declarations`). */
  id: string;
  parts: readonly ControllerPart[];
  /** Verbs of these parts that only read, for parts that register them without saying so. */
  queries?: readonly string[];
  /** Verbs of these parts whose answer carries a secret, for parts that register them without saying so. */
  secretAnswers?: readonly string[];
  /** Children that must have started before this one starts (reports before enrolments are answered). */
  after?: readonly string[];
}

/**
 * A group of parts as a service: started in order once this controller holds the lease, each
 * registering its verbs through a view of the registry that lets a restarted part register them
 * again, and stopped in reverse order. A part that fails to start has the ones before it stopped
 * again, and fails the child.
 */
export function partsService(group: PartGroup, ctx: ControllerContext, verbs: VerbRegistry, ledger: ServiceLedger): ControllerService {
  return {
    id: group.id,
    needsLease: true,
    start: async (signal) => {
      await ledger.allStarted(group.after ?? [], signal);
      const scoped = verbs.scoped(group.id, { queries: group.queries ?? [], secretAnswers: group.secretAnswers ?? [] });
      const running: Array<{ name: string; part: RunningPart }> = [];
      const stop = async (): Promise<void> => {
        for (const { name, part } of running.splice(0).reverse()) {
          try {
            await part.stop();
          } catch (error) {
            ctx.log(`${name}: did not stop cleanly: ${(error as Error)?.message ?? String(error)}`, { level: 'warn' });
          }
        }
      };
      try {
        for (const part of group.parts) running.push({ name: part.name, part: await part.start(ctx, scoped) });
      } catch (error) {
        await stop();
        throw error;
      }
      return { stop };
    },
  };
}
