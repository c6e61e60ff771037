// Why keeping a machine's original did not work. The adoption machine tells the two apart
// (`couldNotRead`) because the briefing does: a machine that cannot be read is `unknown` (we
// could not tell), a copy that cannot be made is `failed` (we could not do). In both, nothing
// was written to the machine.

/** The machine's side of a resource could not be read while its original was being kept. */
export class MachineUnreadable extends Error {
  /** Read by the adoption machine: this failure is the machine's, not the copy's. */
  readonly couldNotRead = true;
  /** The resource key. */
  readonly key: string;

  constructor(key: string, reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = 'MachineUnreadable';
    this.key = key;
  }
}

/** The machine could be read, but its original could not be written under the originals folder. */
export class OriginalNotKept extends Error {
  /** Read by the adoption machine: the copy failed, so the line is `failed`. */
  readonly couldNotRead = false;
  /** Where the original was to be kept. */
  readonly dir: string;

  constructor(dir: string, reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = 'OriginalNotKept';
    this.dir = dir;
  }
}
