/**
 * Keeps the host's side of "how stale am I": when it was last linked, and how long it had been
 * away when the link came back. A report on a working link says 0, except the first one after
 * the link returns, which says how long the host was without it — that is how a long absence
 * reaches the mesh at all. A report written while unlinked (sent when the client reconnects)
 * says how long it has been since the link was last known to work; null when it never was.
 */
export class LinkClock {
  private linked = false;
  private absence: number | undefined;
  private absenceBeforeThisLink = 0;

  constructor(private lastLinked: Date | null) {}

  /** The last moment the link was known to work: what the store keeps as last_linked_at. */
  lastLinkedAt(): Date | null {
    return this.lastLinked;
  }

  /** The link came up at `now`. */
  up(now: Date): void {
    if (this.linked) return;
    if (this.lastLinked !== null) this.absence = secondsBetween(this.lastLinked, now);
    this.absenceBeforeThisLink = this.absence ?? 0;
    this.linked = true;
    this.lastLinked = now;
  }

  /** The link went down at `now`: the last moment it is known to have worked. */
  down(now: Date): void {
    if (!this.linked) return;
    this.linked = false;
    this.lastLinked = now;
  }

  /**
   * How long the host was without a link before the current one came up (0 when it is not
   * linked, or never was before): what the first heartbeat of a link says, without taking the
   * telling away from the report that follows.
   */
  absenceBeforeLink(): number {
    return this.linked ? this.absenceBeforeThisLink : 0;
  }

  /** The value for a report written at `now`; the absence is told once. */
  secondsSinceLinked(now: Date): number | null {
    if (this.linked) {
      const absence = this.absence ?? 0;
      this.absence = undefined;
      return absence;
    }
    return this.lastLinked === null ? null : secondsBetween(this.lastLinked, now);
  }
}

function secondsBetween(from: Date, to: Date): number {
  return Math.max(0, Math.round((to.getTime() - from.getTime()) / 1000));
}
