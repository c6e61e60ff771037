/**
 * What the serving controller did since it started, counted where it happens: declarations
 * sent (by kind), reports kept, reports it refused (by reason), declarations a host refused (by
 * reason), lease renewals (made or failed). Plain numbers, so the code that counts imports no
 * metrics library; the metrics child reads them at each scrape. Counts restart at zero with the
 * process, as a Prometheus counter may.
 */
export class MeshTally {
  readonly sent = new Map<string, number>();
  reports = 0;
  readonly reportsRefused = new Map<string, number>();
  readonly declarationsRefused = new Map<string, number>();
  renewals = 0;
  renewalsFailed = 0;

  /** A declaration of `kind` (overlay, full, final) was published. */
  declarationSent(kind: string): void {
    bump(this.sent, kind);
  }

  /** A node's report was kept. */
  reportKept(): void {
    this.reports += 1;
  }

  /** A report was refused by the controller (older, duplicate, unknown_node, wrong_subject, malformed). */
  reportRefused(reason: string): void {
    bump(this.reportsRefused, reason);
  }

  /** A kept report says the host refused a declaration, for `reason`. */
  declarationRefused(reason: string): void {
    bump(this.declarationsRefused, reason);
  }

  /** A renewal of the lease came back: written, or not. */
  leaseRenewal(renewed: boolean): void {
    if (renewed) this.renewals += 1;
    else this.renewalsFailed += 1;
  }
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

const tallies = new WeakMap<object, MeshTally>();

/**
 * The one MeshTally of a serving controller, keyed by its context like busObjects: the sender,
 * the report receiver and the metrics child reach the same counts without another field on
 * the context.
 */
export function meshTally(ctx: object): MeshTally {
  let found = tallies.get(ctx);
  if (found === undefined) {
    found = new MeshTally();
    tallies.set(ctx, found);
  }
  return found;
}
