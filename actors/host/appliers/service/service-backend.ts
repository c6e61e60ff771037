import type { ApplyContext } from '../applier';

/** What the init says about one service, asked afresh. */
export interface ServiceStatus {
  /** The init knows the service (a unit file, an init script, a definition). */
  exists: boolean;
  running: boolean;
  /** Started at boot. False for a service that does not exist. */
  enabled: boolean;
  /**
   * The init's own word when enablement is not a plain yes or no (`static`, `masked`), so a
   * difference can say why enabling or disabling will not take.
   */
  detail?: string;
}

/**
 * One init system, as the service applier needs it: ask, start, stop, enable, disable. Each
 * method runs its programs through `ctx.runner` and resolves files under `ctx.root`, so tests
 * swap the init for a recording fake. A method that cannot do its work throws `ApplyFailed`
 * with the reason (the command and what it said).
 */
export interface ServiceBackend {
  /** The init's name as a person knows it (`systemd`, `OpenRC`), for messages. */
  readonly manager: string;
  status(name: string, ctx: ApplyContext): Promise<ServiceStatus>;
  start(name: string, ctx: ApplyContext): Promise<void>;
  stop(name: string, ctx: ApplyContext): Promise<void>;
  enable(name: string, ctx: ApplyContext): Promise<void>;
  disable(name: string, ctx: ApplyContext): Promise<void>;
}
