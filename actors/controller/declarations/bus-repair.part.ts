import type { ControllerPart } from '../serve/controller-parts';
import { readBackDeclarations } from './read-back-declarations';

/** Five minutes (seed 003): how often the declaration stream is read back against the store. */
export const READ_BACK_EVERY_MS = 5 * 60_000;

/**
 * The bus's self-repair: reads the declaration stream back against the store at start (a
 * controller starting again may find the stream made again empty, with no consumer in it) and
 * every `everyMs` after (readBackDeclarations). One read-back at a time; one that is due while
 * another runs is skipped. What a read-back could not do is logged and tried again next time.
 */
export function busRepairPart(everyMs: number = READ_BACK_EVERY_MS): ControllerPart {
  return {
    name: 'bus-repair',
    start: async (ctx) => {
      let running: Promise<void> | undefined;
      const readBack = (): void => {
        if (running !== undefined) return;
        running = readBackDeclarations(ctx)
          .then((done) => {
            if (done.consumers + done.republished + done.failed > 0) {
              ctx.log(`read-back: ${done.nodes} node(s) looked at; ${done.consumers} consumer(s) made again, ${done.republished} declaration(s) sent again, ${done.failed} not looked at`, { nodes: done.nodes, consumers: done.consumers, republished: done.republished, failed: done.failed });
            }
          })
          .catch((error: unknown) => ctx.log(`read-back: could not read the declaration stream back (tried again in ${Math.round(everyMs / 1000)} s): ${error instanceof Error ? error.message : String(error)}`, { level: 'error' }))
          .finally(() => {
            running = undefined;
          });
      };
      readBack();
      const timer = setInterval(readBack, everyMs);
      return {
        stop: async () => {
          clearInterval(timer);
          await running;
        },
      };
    },
  };
}
