import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Condition } from '../../../schema/condition';
import { NodeName } from '../../../schema/primitives';
import { DECLARATION_STREAM } from '../../shared/bus/subjects';
import { messageOf } from '../../shared/message-of';
import type { ControllerLog } from '../logs/log-fields';
import type { BusAdvisory } from './watchdog-view';

/**
 * The broker's JetStream advisories the watchdog's S9 row hears, on the declaration stream only.
 * They are published in the account JetStream runs in, MESH, where the controller's user is and
 * may subscribe `$JS.>` (docs/bus-trust.md); verified on nats-server 2.9 by
 * bus-advisories.serve.test.ts.
 */
export const ADVISORY_SUBJECTS = {
  maxDeliveries: `$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${DECLARATION_STREAM}.*`,
  consumerDeleted: `$JS.EVENT.ADVISORY.CONSUMER.DELETED.${DECLARATION_STREAM}.*`,
} as const;

/** How many advisories are kept waiting for the watchdog's look: a flood of them cannot grow the controller. */
export const ADVISORIES_KEPT = 1_000;

/** The node a declaration consumer is for (`node-kitchen` is kitchen's), or undefined for a consumer not the mesh's. */
export function nodeOfConsumer(consumer: unknown): string | undefined {
  if (typeof consumer !== 'string' || !consumer.startsWith('node-')) return undefined;
  const node = consumer.slice('node-'.length);
  return NodeName.safeParse(node).success ? node : undefined;
}

/** One advisory heard, waiting for the look that finds it no longer holds. */
export interface HeardAdvisory extends BusAdvisory {
  /** The stream sequence of the declaration given up on (max-deliveries). */
  streamSeq?: number;
}

/** What an advisory heard is checked against at each look: whether it still holds. */
export interface AdvisoryObservations {
  /** True while `node` is a node the mesh keeps a consumer for (enrolled or disconnected) and its consumer is not there. */
  consumerMissing(node: string): Promise<boolean>;
  /** True once a report from `node` was kept after `at`; also true when the node is gone. */
  reportedSince(node: string, at: Date): Promise<boolean>;
}

/**
 * Listens to the broker's advisories from start, keeping each until a look finds it no longer
 * holds: a deleted consumer until it is there again, a declaration given up on until a report
 * from its node is kept. Each is logged once when heard, in the mesh's words.
 * `standing()` throws when the listening has stopped, so the row says it cannot see.
 */
export class BusAdvisoryWatch {
  readonly #heard = new Map<string, HeardAdvisory>();
  readonly #subs: Subscription[] = [];
  #stopped: string | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly observe: AdvisoryObservations,
    private readonly log: ControllerLog,
    private readonly now: () => Date,
  ) {
    this.#subs.push(nc.subscribe(ADVISORY_SUBJECTS.maxDeliveries, { callback: (error, msg) => (error === null ? this.#maxDeliveries(msg.json()) : this.#end(error)) }));
    this.#subs.push(nc.subscribe(ADVISORY_SUBJECTS.consumerDeleted, { callback: (error, msg) => (error === null ? this.#deleted(msg.json()) : this.#end(error)) }));
  }

  /** The advisories heard that still hold, dropping those that no longer do. */
  async standing(): Promise<BusAdvisory[]> {
    if (this.#stopped !== undefined) throw new Error(`the controller is not listening to the broker's advisories: ${this.#stopped}`);
    if (this.nc.isClosed()) throw new Error('the controller\'s connection to the broker is closed');
    const standing: BusAdvisory[] = [];
    for (const [key, advisory] of [...this.#heard]) {
      if (await this.#holds(advisory)) standing.push({ kind: advisory.kind, about: advisory.about, at: advisory.at, detail: advisory.detail });
      else this.#heard.delete(key);
    }
    return standing;
  }

  /**
   * Takes up the advisories an earlier controller raised and left open (`bus-advisory.<kind>.<node>`),
   * as if heard at their raising: what was heard before this process started is not heard again,
   * and its absence here is not evidence that it stopped holding.
   */
  takeUp(conditions: readonly Condition[]): void {
    for (const condition of conditions) {
      if (condition.kind !== 'bus-advisory' || condition.state !== 'open') continue;
      const [kind, ...rest] = condition.subject.split('.');
      const node = rest.join('.');
      if ((kind !== 'consumer-deleted' && kind !== 'max-deliveries') || !NodeName.safeParse(node).success) continue;
      const key = `${kind}.${node}`;
      if (this.#heard.has(key)) continue;
      // The hearing's time and facts as the condition says them, so taking it up changes nothing it says.
      const said = kind === 'consumer-deleted'
        ? /was deleted at (\S+) and is not there again/.exec(condition.detail)
        : /its declaration at (\S+): (.*); it has kept no report from the node since$/.exec(condition.detail);
      const at = said?.[1] !== undefined && !Number.isNaN(Date.parse(said[1])) ? new Date(said[1]) : new Date(condition.raised_at);
      const detail = kind === 'consumer-deleted' ? deletedDetail(node) : (said?.[2] ?? 'heard by an earlier controller');
      this.#heard.set(key, { kind, about: node, at, detail });
    }
  }

  /** Stops listening. */
  stop(): void {
    this.#stopped ??= 'the watchdog stopped';
    for (const sub of this.#subs) sub.unsubscribe();
  }

  async #holds(advisory: HeardAdvisory): Promise<boolean> {
    switch (advisory.kind) {
      case 'consumer-deleted':
        return this.observe.consumerMissing(advisory.about);
      case 'max-deliveries':
        return !(await this.observe.reportedSince(advisory.about, advisory.at));
    }
  }

  #keep(key: string, advisory: HeardAdvisory, line: string): void {
    // Heard again (the same node's consumer deleted twice): the first hearing's time is kept.
    if (!this.#heard.has(key)) {
      if (this.#heard.size >= ADVISORIES_KEPT) {
        const oldest = this.#heard.keys().next().value;
        if (oldest !== undefined) this.#heard.delete(oldest);
      }
      this.#heard.set(key, advisory);
    }
    this.log(line, { level: 'warn', advisory: advisory.kind, about: advisory.about });
  }

  #maxDeliveries(body: unknown): void {
    const advisory = body as { consumer?: unknown; stream_seq?: unknown; deliveries?: unknown };
    const node = nodeOfConsumer(advisory.consumer);
    if (node === undefined) return;
    const seq = typeof advisory.stream_seq === 'number' ? advisory.stream_seq : undefined;
    const deliveries = typeof advisory.deliveries === 'number' ? advisory.deliveries : undefined;
    const detail = `the declaration at stream sequence ${seq ?? '?'} was delivered ${deliveries ?? 'its maximum number of'} time(s) and never acknowledged`;
    this.#keep(`max-deliveries.${node}`, { kind: 'max-deliveries', about: node, at: this.now(), detail, ...(seq === undefined ? {} : { streamSeq: seq }) }, `broker: gave up delivering node ${node} its declaration: ${detail}`);
  }

  #deleted(body: unknown): void {
    const node = nodeOfConsumer((body as { consumer?: unknown }).consumer);
    if (node === undefined) return;
    const detail = deletedDetail(node);
    // The controller deletes a node's consumer itself on release and on a fresh enrolment; the
    // look tells those apart (the node gone, or its consumer there again), so only that is said here.
    this.#keep(`consumer-deleted.${node}`, { kind: 'consumer-deleted', about: node, at: this.now(), detail }, `broker: node ${node}'s declaration consumer was deleted (${detail})`);
  }

  #end(error: unknown): void {
    if (this.#stopped !== undefined) return;
    this.#stopped = messageOf(error);
    this.log(`broker: the controller stopped hearing the broker's advisories: ${this.#stopped}`, { level: 'error' });
  }
}

function deletedDetail(node: string): string {
  return `the broker's advisory named its consumer node-${node} on ${DECLARATION_STREAM}`;
}
