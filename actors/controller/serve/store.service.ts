import type { Sql } from '../store/sql-store';
import type { ControllerService } from './service-ledger';

/** How often the `store` child asks the store whether it answers. */
export const STORE_CHECK_EVERY_MS = 30_000;

/**
 * The tree's `store` child: asks the store a trivial question at start and every
 * `everyMs`, and fails when it does not answer, so a store that went away shows in the tree
 * (backing off, with the store's error) and, if it stays away, stops the process naming `store`
 * rather than leaving every part failing on its own.
 */
export function storeService(store: Sql, everyMs = STORE_CHECK_EVERY_MS): ControllerService {
  const check = async (): Promise<void> => {
    try {
      await store.query('SELECT 1');
    } catch (error) {
      throw new Error(`the store did not answer: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    }
  };
  return {
    id: 'store',
    needsLease: false,
    start: async () => {
      await check();
      let timer: NodeJS.Timeout | undefined;
      let checking: Promise<void> | undefined;
      const failed = new Promise<never>((_, reject) => {
        timer = setInterval(() => {
          if (checking !== undefined) return;
          checking = check().catch(reject).finally(() => {
            checking = undefined;
          });
        }, everyMs);
      });
      failed.catch(() => undefined);
      return {
        failed,
        stop: async () => {
          clearInterval(timer);
          await checking;
        },
      };
    },
  };
}
