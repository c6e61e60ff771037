/** Where rouses come from: SIGUSR1 on the host process, or a test's own trigger. */
export interface RouseSource {
  /** Calls `onRouse` for every rouse from now on, until the returned function is called. */
  listen(onRouse: () => void): () => void;
}

/** The process, as far as rousing is concerned. */
interface SignalTarget {
  on(signal: 'SIGUSR1', listener: () => void): unknown;
  off(signal: 'SIGUSR1', listener: () => void): unknown;
}

/**
 * Rouses as the resume unit and the network dispatcher send them: SIGUSR1 to the pid in
 * `<state>/host.pid` (packaging/nox-mesh-host-rouse). A signal rather than anything listening,
 * so the machine has no control surface for it. A listener is in place for as long as someone
 * listens, which also keeps Node from answering SIGUSR1 by opening its inspector.
 */
export function signalRouses(target: SignalTarget = process): RouseSource {
  return {
    listen: (onRouse) => {
      const listener = (): void => onRouse();
      target.on('SIGUSR1', listener);
      return () => { target.off('SIGUSR1', listener); };
    },
  };
}
