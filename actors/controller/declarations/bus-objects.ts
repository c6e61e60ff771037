import { AckPolicy, DeliverPolicy, JetStreamApiCodes, jetstreamManager, type ConsumerConfig, type JetStreamManager } from '@nats-io/jetstream';
import { TimeoutError } from '@nats-io/transport-node';
import { DECLARATION_ACK_WAIT_MS, DECLARATION_ACK_WAIT_NS, DECLARATION_STREAM, declarationConsumer, declarationSubject } from '../../shared/bus/subjects';
import type { ControllerContext } from '../controller-context';
import { ensureDeclarationStream } from '../serve/ensure-declaration-stream';
import { BusRepairs } from './bus-repairs';
import { addNodeConsumer, deleteConsumer, isApiError } from './declaration-stream';

/**
 * How long an assertion before a send stands: a push to 10,000 nodes asks the broker about the
 * stream once and about each consumer once, not again for every send in the next seconds.
 */
export const ASSERTED_FOR_MS = 10_000;

/** What asserting a node's consumer found. */
export type ConsumerAsserted = 'present' | 'created' | 'replaced';

/**
 * The bus objects the controller's declarations need, asserted before every send (seed 003:
 * assertOnSend) and on every read-back: the declaration stream with its settings, and each
 * node's durable consumer filtered to its own subject. What is missing is made again and what is
 * wrong is replaced, each a counted repair. An assertion is remembered for `ttlMs` per node;
 * a send or read-back that finds something gone forgets it, so the next send asserts again.
 */
export class BusObjects {
  readonly repairs: BusRepairs;
  #streamAt: number | undefined;
  readonly #consumerAt = new Map<string, number>();
  #streamAsserting: Promise<void> | undefined;
  #listing: Promise<void> | undefined;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly ttlMs: number = ASSERTED_FOR_MS,
  ) {
    this.repairs = new BusRepairs((line) => ctx.log(line));
  }

  /**
   * Before a send to `node`: the stream and its consumer, unless asserted within the last
   * `ttlMs`. A stale assertion is renewed for every node at once, from one listing of the
   * stream's consumers shared by every send waiting on it, so a push to 10,000 nodes costs a
   * few pages of listing, not 10,000 requests; only a consumer missing or wrong is asked about
   * on its own, and made again or replaced.
   */
  async assertForSend(node: string): Promise<void> {
    if (!this.#fresh(this.#streamAt)) await (this.#streamAsserting ??= this.assertStream().finally(() => (this.#streamAsserting = undefined)));
    if (this.#fresh(this.#consumerAt.get(node))) return;
    await (this.#listing ??= this.#listConsumers().finally(() => (this.#listing = undefined)));
    if (!this.#fresh(this.#consumerAt.get(node))) await this.assertConsumer(await jetstreamManager(this.ctx.nc), node);
  }

  /**
   * For a node that says it cannot hear its declarations: the stream as for a send, then the
   * node's consumer asked about on its own, whatever a listing or an earlier assertion said, and
   * made again when it does not answer. nats-server 2.9 may leave a replicated consumer without
   * a leader after a server restarts: it is still listed, but nothing answers for it, so the
   * node's pulls time out for as long as it stays so. Made again, it gets a leader.
   */
  async assertForDeaf(node: string): Promise<ConsumerAsserted> {
    if (!this.#fresh(this.#streamAt)) await (this.#streamAsserting ??= this.assertStream().finally(() => (this.#streamAsserting = undefined)));
    return this.assertConsumer(await jetstreamManager(this.ctx.nc), node, { replaceUnanswered: true });
  }

  /**
   * The declaration stream as ensureDeclarationStream makes it. Made again, it holds no consumer
   * and no slot: every node's remembered assertion is forgotten, and the read-back sends each
   * node its declaration again.
   */
  async assertStream(): Promise<void> {
    const outcome = await ensureDeclarationStream(this.ctx.nc, this.ctx.config.broker.replicas ?? 1);
    if (outcome === 'created') {
      this.#consumerAt.clear();
      this.repairs.record({ kind: 'stream_created', subject: `stream ${DECLARATION_STREAM}`, detail: 'the declaration stream was missing and was made again; every node\'s consumer and declaration follow', at: this.ctx.now() });
    } else if (outcome === 'updated') {
      this.repairs.record({ kind: 'stream_updated', subject: `stream ${DECLARATION_STREAM}`, detail: 'the declaration stream\'s settings had been changed and were put back', at: this.ctx.now() });
    }
    this.#streamAt = this.ctx.now().getTime();
  }

  /**
   * `node`'s consumer, made when missing and replaced when its filter or acknowledgement is not
   * what the node's intake expects. A consumer made again starts after what its slot holds when
   * the node has reported holding the latest declaration sent (it would refuse it again), and
   * with the slot otherwise.
   */
  async assertConsumer(manager: Pick<JetStreamManager, 'consumers'>, node: string, options: { replaceUnanswered?: boolean } = {}): Promise<ConsumerAsserted> {
    let outcome: ConsumerAsserted;
    try {
      const { config } = await manager.consumers.info(DECLARATION_STREAM, declarationConsumer(node));
      if (isAsNodeNeeds(config, node)) {
        outcome = 'present';
      } else {
        await deleteConsumer(manager, node);
        await addNodeConsumer(manager, node, await this.#deliverFrom(node));
        outcome = 'replaced';
        this.repairs.record({ kind: 'consumer_replaced', subject: `node ${node}`, detail: `its consumer ${declarationConsumer(node)} read ${JSON.stringify(config.filter_subject ?? '')} with ack policy ${config.ack_policy} and an acknowledgement wait of ${(config.ack_wait ?? 0) / 1e9} s; replaced by one reading ${declarationSubject(node)} only, waiting ${DECLARATION_ACK_WAIT_MS / 1000} s`, at: this.ctx.now() });
      }
    } catch (error) {
      if (options.replaceUnanswered === true && isLeaderless(error)) {
        // Deleting and adding are the meta leader's to answer, not the lost consumer leader's.
        await deleteConsumer(manager, node);
        await addNodeConsumer(manager, node, await this.#deliverFrom(node));
        this.repairs.record({ kind: 'consumer_replaced', subject: `node ${node}`, detail: `its consumer ${declarationConsumer(node)} did not answer (${error instanceof Error ? error.message : String(error)}: no leader since a server restarted) while the node could not hear its declarations; made again`, at: this.ctx.now() });
        this.#consumerAt.set(node, this.ctx.now().getTime());
        return 'replaced';
      }
      if (isApiError(error, JetStreamApiCodes.StreamNotFound)) {
        this.forgetStream();
        await this.assertStream();
      } else if (!isApiError(error, JetStreamApiCodes.ConsumerNotFound)) {
        throw error;
      }
      await addNodeConsumer(manager, node, await this.#deliverFrom(node));
      outcome = 'created';
      this.repairs.record({ kind: 'consumer_created', subject: `node ${node}`, detail: `its consumer ${declarationConsumer(node)} was missing, so it could not receive declarations; made again`, at: this.ctx.now() });
    }
    this.#consumerAt.set(node, this.ctx.now().getTime());
    return outcome;
  }

  /** Forgets that `node`'s consumer was asserted: the next send asserts it again. */
  forget(node: string): void {
    this.#consumerAt.delete(node);
  }

  /** Forgets that the stream was asserted: the next send asserts it again. */
  forgetStream(): void {
    this.#streamAt = undefined;
  }

  /** Marks every consumer the stream holds as a node needs it as asserted now. */
  async #listConsumers(): Promise<void> {
    const manager = await jetstreamManager(this.ctx.nc);
    const at = this.ctx.now().getTime();
    for await (const info of manager.consumers.list(DECLARATION_STREAM)) {
      const node = info.name.startsWith(CONSUMER_PREFIX) ? info.name.slice(CONSUMER_PREFIX.length) : undefined;
      if (node !== undefined && isAsNodeNeeds(info.config, node)) this.#consumerAt.set(node, at);
    }
  }

  async #deliverFrom(node: string): Promise<typeof DeliverPolicy.All | typeof DeliverPolicy.New> {
    const [row] = await this.ctx.store.query<{ reported: number | null; latest: number | null }>(
      'SELECT n.report_generation AS reported, (SELECT max(d.generation) FROM declarations d WHERE d.node = n.name) AS latest FROM nodes n WHERE n.name = $1',
      [node],
    );
    const holdsLatest = row?.reported != null && row.latest != null && Number(row.reported) >= Number(row.latest);
    return holdsLatest ? DeliverPolicy.New : DeliverPolicy.All;
  }

  #fresh(at: number | undefined): boolean {
    const age = this.ctx.now().getTime() - (at ?? Number.NEGATIVE_INFINITY);
    return age >= 0 && age < this.ttlMs;
  }
}

/** JetStream's answer when the cluster cannot serve the request now (no leader for it). */
const CLUSTER_NOT_AVAILABLE = 10008;

/** True when nothing answered for a consumer: a timeout, or the cluster saying it has no leader for it. */
function isLeaderless(error: unknown): boolean {
  return error instanceof TimeoutError || isApiError(error, CLUSTER_NOT_AVAILABLE);
}

/** What every node's consumer is named with, before the node's name (declarationConsumer). */
const CONSUMER_PREFIX = declarationConsumer('');

/**
 * True when a consumer reads the node's own subject only and waits for explicit acknowledgement
 * no longer than DECLARATION_ACK_WAIT_MS (a longer wait leaves a declaration handed to a stale
 * pull out of reach for that long).
 */
export function isAsNodeNeeds(config: Pick<ConsumerConfig, 'filter_subject' | 'ack_policy' | 'ack_wait'>, node: string): boolean {
  return config.filter_subject === declarationSubject(node) && config.ack_policy === AckPolicy.Explicit && config.ack_wait === DECLARATION_ACK_WAIT_NS;
}

const objects = new WeakMap<object, BusObjects>();

/**
 * The one BusObjects of a serving controller, shared by the sender, the read-back and the report
 * receiver; keyed by the controller's context like its work queue.
 */
export function busObjects(ctx: ControllerContext): BusObjects {
  let found = objects.get(ctx);
  if (found === undefined) {
    found = new BusObjects(ctx);
    objects.set(ctx, found);
  }
  return found;
}
