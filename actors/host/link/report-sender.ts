import type { NatsConnection } from '@nats-io/transport-node';
import { canonicalJson } from '../../../schema/canonical';
import type { LastDeclaration } from '../../../schema/host-state';
import type { ResourceResult } from '../../../schema/report';
import { reportSubject } from '../../shared/bus/subjects';
import { runningVersion } from '../../shared/version';
import type { StateHandle } from '../store/state-handle';
import type { Refused } from './admit-declaration';
import { buildReport } from './build-report';
import type { LinkClock } from './link-clock';
import { reportNumbersOf } from './report-numbers';

/** What a report is about: a pass's results, or a declaration refused whole. */
export interface ReportSubject {
  results: readonly ResourceResult[];
  /** The declaration held when the pass began (or when the refused one arrived). */
  held: LastDeclaration | null;
  refused?: Refused;
}

/** What sending a report needs from the running host. */
export interface ReportSenderDeps {
  node: string;
  state: StateHandle;
  clock: LinkClock;
  /** The connection, when there is one (only its publish is used). */
  connection(): Pick<NatsConnection, 'publish' | 'flush'> | null;
  now(): Date;
}

/**
 * Sends the host's reports on `mesh.node.<node>.report`, as canonical JSON. Each report takes
 * the next report_sequence, reserved in the store before it leaves (in blocks: see
 * ReportNumbers), so the controller never sees a number twice even across a crash. With no
 * connection at all nothing is sent and the sender remembers that a report is owed, for the
 * link to ask for a pass when it comes up; while the client is reconnecting, reports wait in
 * its buffer.
 */
export class ReportSender {
  private owed = false;

  constructor(private readonly deps: ReportSenderDeps) {}

  /**
   * Sends one report; false when there was no connection to send it on. With `confirm`, also
   * waits (at most `confirmMs`) for the broker to acknowledge it has the report — a publish on
   * a connection that went silent is otherwise indistinguishable from one that arrived, and a
   * release must not drop the identity on a report nobody received.
   */
  async send(subject: ReportSubject, options: { confirm?: boolean; confirmMs?: number } = {}): Promise<boolean> {
    const connection = this.deps.connection();
    if (connection === null) {
      this.owed = true;
      return false;
    }
    const reportSequence = await reportNumbersOf(this.deps.state).take();
    const now = this.deps.now();
    const report = buildReport({
      node: this.deps.node,
      state: this.deps.state.current(),
      reportSequence,
      declaration: subject.held,
      results: subject.results,
      ...(subject.refused === undefined ? {} : { refused: subject.refused }),
      secondsSinceLinked: this.deps.clock.secondsSinceLinked(now),
      versionRunning: runningVersion(),
      now,
    });
    connection.publish(reportSubject(this.deps.node), canonicalJson(report));
    if (options.confirm !== true) return true;
    const confirmed = await Promise.race([
      connection.flush().then(() => true, () => false),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), options.confirmMs ?? 5000).unref()),
    ]);
    if (!confirmed) this.owed = true;
    return confirmed;
  }

  /**
   * Reserves report numbers ahead (one store write), so the next report does not wait on one:
   * for a host about to be told something, as the start pass's report leaves a running host.
   */
  async prepare(): Promise<void> {
    await reportNumbersOf(this.deps.state).reserveAhead();
  }

  /** True once after a report could not be sent; the caller makes up for it. */
  takeOwed(): boolean {
    const owed = this.owed;
    this.owed = false;
    return owed;
  }
}
