/** The signals that stop a foreground process of the mesh: its service manager's, and Ctrl-C. */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT'];

/**
 * Resolves with the first stop signal this process receives, handling it instead of Node's
 * default (which would end the process before anything is closed). The handlers are removed
 * once it resolves, or when `abandon` aborts (then it never resolves).
 */
export function waitForStopSignal(abandon?: AbortSignal): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const handlers = new Map<NodeJS.Signals, () => void>();
    const cleanUp = (): void => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
      abandon?.removeEventListener('abort', cleanUp);
    };
    for (const signal of STOP_SIGNALS) {
      const handler = (): void => {
        cleanUp();
        resolve(signal);
      };
      handlers.set(signal, handler);
      process.on(signal, handler);
    }
    abandon?.addEventListener('abort', cleanUp, { once: true });
  });
}
