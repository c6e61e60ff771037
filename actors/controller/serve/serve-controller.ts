import { VerbRegistry } from '../control/verb-registry';
import { startControlDispatcher } from '../control/control-dispatcher';
import type { ControllerContext } from '../controller-context';
import type { ControllerPart, RunningPart } from './controller-parts';
import { openController, type OpenControllerOptions } from './open-controller';
import { CONTROLLER_PARTS } from './parts';

/** Options of {@link serveController}. */
export interface ServeControllerOptions extends OpenControllerOptions {
  /** The parts to start; CONTROLLER_PARTS unless given. */
  parts?: readonly ControllerPart[];
}

/** A controller serving: its context and verbs, and how to stop it. */
export interface ServingController {
  ctx: ControllerContext;
  verbs: VerbRegistry;
  /**
   * Stops taking control calls (those under way are answered), stops the parts in reverse
   * order, drains the bus connection and closes the store. Calling it again waits for the
   * first call.
   */
  stop(): Promise<void>;
}

/**
 * The composition root of `mesh-control serve`: opens the controller (openController), starts
 * each part with the context and the verb registry, then answers control calls. When a part
 * fails to start, those already started are stopped, everything is closed and the failure is
 * thrown.
 */
export async function serveController(dir: string, options: ServeControllerOptions = {}): Promise<ServingController> {
  const opened = await openController(dir, options);
  const { ctx } = opened;
  const verbs = new VerbRegistry();
  const running: Array<{ name: string; part: RunningPart }> = [];
  const stopParts = async (): Promise<void> => {
    for (const { name, part } of running.reverse()) {
      try {
        await part.stop();
      } catch (error) {
        ctx.log(`${name}: did not stop cleanly: ${(error as Error)?.message ?? String(error)}`);
      }
    }
  };
  try {
    for (const part of options.parts ?? CONTROLLER_PARTS) {
      running.push({ name: part.name, part: await part.start(ctx, verbs) });
    }
  } catch (error) {
    await stopParts();
    await opened.close();
    throw error;
  }
  const dispatcher = startControlDispatcher(ctx, verbs);
  ctx.log(`serving: epoch ${ctx.epoch()}, store ${ctx.store.kind}, broker ${ctx.config.broker.url}; parts: ${running.map((entry) => entry.name).join(', ') || 'none'}; verbs: ${verbs.verbs().join(', ') || 'none'}`);

  let stopping: Promise<void> | undefined;
  return {
    ctx,
    verbs,
    stop: () =>
      (stopping ??= (async () => {
        await dispatcher.stop();
        await stopParts();
        await opened.close();
        ctx.log('stopped');
      })()),
  };
}
