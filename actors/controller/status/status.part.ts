import * as z from 'zod';
import type { ControllerPart } from '../serve/controller-parts';
import { composeStatus, type StatusSources } from './compose-status';
import { formatStatus } from './format-status';
import type { StatusBoard } from './status-board';

/** How often status is composed when nothing asks for it sooner. */
export const STATUS_EVERY_MS = 60_000;

/** The least time between two compositions asked for by news. */
export const STATUS_GAP_MS = 1_000;

/**
 * The status composer and the verb `status` (`mesh-control status`). Composes at start, when
 * asked through the board (news from a node, an acting verb) and every `everyMs`; requests
 * while composing make exactly one more composition after it, however many arrive, and at
 * least `gapMs` after it, so a fleet's heartbeats do not keep the store busy composing. The verb
 * answers the last composition at once (waiting only for the first), saying when it was
 * composed and how long that took, so asking never makes the caller wait for the mesh.
 */
export function statusPart(board: StatusBoard, sources: StatusSources, everyMs = STATUS_EVERY_MS, gapMs = STATUS_GAP_MS): ControllerPart {
  return {
    name: 'status',
    start: async (ctx, verbs) => {
      verbs.register(
        'status',
        z.strictObject({}),
        async (callCtx) => {
          const status = await board.current();
          return { result: status, text: formatStatus(status, callCtx.now()) };
        },
        { query: true },
      );
      let composing: Promise<void> | undefined;
      let again = false;
      let stopped = false;
      let gap: { timer: NodeJS.Timeout; end(): void } | undefined;
      const pause = (): Promise<void> =>
        new Promise((resolve) => {
          gap = { timer: setTimeout(resolve, gapMs), end: resolve };
        });
      const compose = (): void => {
        if (composing !== undefined) {
          again = true;
          return;
        }
        composing = (async () => {
          do {
            again = false;
            try {
              board.publish(await composeStatus(sources));
            } catch (error) {
              ctx.log(`status: could not be composed (the last composition stands): ${(error as Error)?.message ?? String(error)}`, { level: 'error' });
            }
            if (again && !stopped) await pause();
          } while (again && !stopped);
        })().finally(() => {
          composing = undefined;
        });
      };
      compose();
      const stopListening = board.listen(() => compose());
      const timer = setInterval(compose, everyMs);
      return {
        stop: async () => {
          stopped = true;
          clearInterval(timer);
          stopListening();
          if (gap !== undefined) {
            clearTimeout(gap.timer);
            gap.end();
          }
          await composing;
        },
      };
    },
  };
}
