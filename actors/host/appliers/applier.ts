import type { Resource } from '../../../schema/resource';
import type { CommandRunner } from '../../shared/process/command-runner';
import type { DirectorySyncBarrier } from './directory-sync-barrier';
import type { PassMemo } from './pass-memo';

/**
 * What every applier is given. Everything an applier touches resolves under `root`, so a whole
 * machine can be a temporary folder; programs run through `runner`, so a backend whose program
 * cannot run here is tested against a recording fake.
 */
export interface ApplyContext {
  /** The machine's root (`--root`, default `/`). Paths in resources are resolved under it. */
  root: string;
  /** The host's state directory (originals kept by adoption live under it). */
  stateDir: string;
  runner: CommandRunner;
  /** The host's own service unit. A declaration naming it is refused: the installation owns the host. */
  hostUnit: string;
  /** Leaving the apply (a newer declaration, shutdown) aborts the work in progress. */
  signal?: AbortSignal;
  /**
   * When given, directories changed by a write are synced when the barrier is flushed rather
   * than after every file: the caller flushes it before recording the work (converge does).
   * Without one, every write syncs its directory before it returns.
   */
  barrier?: DirectorySyncBarrier;
  /** When given, directories and accounts looked up are reused for the rest of the pass. */
  pass?: PassMemo;
  /**
   * Where this process's open descriptors are named, `/proc/self/fd` unless said otherwise:
   * every write goes through the directory the host checked and holds open (root-path.ts).
   */
  fdDirectory?: string;
  /**
   * Tests only: called between the check of a path and the write through it, where an attacker
   * who owns a directory on the way would swap it for a link.
   */
  raceWindow?: (real: string) => void;
  /**
   * Tests only: called between the check of a path and the look through it (observe), where the
   * same attacker would swap a directory to have the host report on a file outside the root.
   */
  lookWindow?: (real: string) => void;
  /**
   * Opens a box sealed to this node's key (a file's sealed content), in memory; absent on a host
   * that is not enrolled. See sealed-content.ts.
   */
  openSealed?: (box: string) => Promise<Uint8Array>;
}

/**
 * What the machine has for one resource, asked afresh. `differences` is empty exactly when the
 * machine matches the declaration; each entry is one line a person can read
 * ("mode is 0600, declared 0644").
 */
export interface Observation {
  /** Something is there at all: a file at the path, the package installed, the container created. */
  present: boolean;
  differences: string[];
  /** Set when the machine could not be read (permission denied, a locked database): the reason. */
  unreadable?: string;
}

/** What removing an undeclared resource did, per the removal table. */
export type Removal = 'removed' | 'stopped' | 'forgotten';

/** What {@link Applier.handBack} did: the machine's `HandBackResult` (machines/adoption.machine.ts). */
export interface HandBack {
  outcome: 'handed_back' | Removal;
  /** What was put back, or why it was not: one line a person can read. */
  what: string;
}

/**
 * One resource shape. The host calls, in order: `observe` (plan: what would change), `apply`
 * when something differs, then `observe` again (read back) — a resource whose read-back still
 * differs has failed and is not recorded as owned.
 *
 * Removal is not symmetric (the seed's table): file/directory removed; container removed;
 * service stopped, its unit file kept; package forgotten, left installed; action forgotten.
 */
export interface Applier<R extends Resource = Resource> {
  readonly shape: R['shape'];
  /** Refuses a resource this host must not take (its own unit, a shape its kind cannot hold). */
  refuse?(resource: R, ctx: ApplyContext): string | undefined;
  /**
   * Optional: removes what a host killed while applying `resource` may have left beside it (a
   * file's temporaries). Run by converge, before the resource is looked at, for a resource the
   * host owns or marked applying, whether or not it then needs an apply: the file a killed
   * host was rewriting may already be right, and nothing else would clear its temporaries.
   */
  tidy?(resource: R, ctx: ApplyContext): void;
  observe(resource: R, ctx: ApplyContext): Promise<Observation>;
  apply(resource: R, ctx: ApplyContext): Promise<ApplyOutcome>;
  /**
   * Optional: does ahead, side by side, the slow part of applying `resources`, which are about to
   * be applied one by one in this order (files: the new content written and synced beside each
   * path, so that `apply` only renames it in place and the syncs of a batch share the file
   * system's journal commits). Nothing the machine shows changes here. A resource it cannot
   * prepare is simply applied the usual way; what `apply` does not take is removed by
   * `discardPrepared`, which the caller runs after the batch whatever happened. It may be called
   * again for the rest of a batch (once an apply made the directory they go in), and leaves
   * what it prepared already as it is.
   */
  prepare?(resources: readonly R[], ctx: ApplyContext): Promise<void>;
  /** Removes whatever `prepare` made that `apply` did not use. */
  discardPrepared?(ctx: ApplyContext): void;
  /** Undoes what the host made for an owned resource that is no longer declared. */
  remove(key: string, ctx: ApplyContext): Promise<Removal>;
  /**
   * Optional: for a resource adoption took over that is no longer declared, puts back what
   * `keepOriginal` kept under `dir` instead of removing it, then deletes the kept copy, the copy
   * before its record (see actors/host/adoption/hand-back.ts for why that order). Returns
   * `handed_back` with what was put back ("content, mode 0640, owner 1000:1000"); a removal, the
   * record staying kept, when what is there now is not the original and cannot be made so; or
   * undefined when no copy is kept under `dir` (any more). Throws ApplyFailed, keeping the copy,
   * when it cannot be put back.
   */
  handBack?(key: string, ctx: ApplyContext, dir: string): Promise<HandBack | undefined>;
  /**
   * Keeps what the machine has before the host writes over something it did not create
   * (adoption). Writes under `dir` and returns the absolute path of what was kept (the copy, or
   * a JSON record of the state it found), or undefined when there is nothing to keep.
   */
  keepOriginal(resource: R, ctx: ApplyContext, dir: string): Promise<string | undefined>;
}

/** Extra facts an apply may return for the report (an action's bounded output). */
export interface ApplyOutcome {
  output?: string;
  /**
   * Directories made on the way to the resource's path (declared paths, outermost first): the
   * host made them, and takes them away when they are empty and no longer needed.
   */
  madeDirectories?: string[];
  /** An action whose guard says it already ran, or nothing needed doing. */
  skipped?: string;
}

/** Thrown by an applier when the machine refused a change; the message is the reason. */
export class ApplyFailed extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ApplyFailed';
  }
}
