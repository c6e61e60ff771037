import { AckPolicy, DeliverPolicy, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { canonicalBytes, canonicalJson } from '../../../../schema/canonical';
import type { Declaration } from '../../../../schema/declaration';
import type { EnrolReply, EnrolRequest } from '../../../../schema/enrolment';
import type { Envelope } from '../../../../schema/envelope';
import type { Report } from '../../../../schema/report';
import {
  DECLARATION_ACK_WAIT_NS,
  DECLARATION_STREAM,
  DECLARATION_SUBJECTS,
  declarationConsumer,
  declarationSubject,
  enrolmentSubject,
  reportSubject,
} from '../../../shared/bus/subjects';
import {
  brokerPasswordFor,
  decodeBase64,
  encodeToken,
  generateSigningKeyPair,
  generateTokenCredentials,
  nkeyPublicOf,
  ready,
  sealEnvelope,
  sodium,
  type SigningKeyPair,
} from '../../../shared/crypto';
import type { TestBroker } from '../../../../tests/broker/test-broker';

/** An enrolment request as the fake controller received it, and whether its proof held. */
export interface ReceivedEnrolment {
  request: EnrolRequest;
  /** The proof is the presented key's signature over the other fields, and the nkey is that key's. */
  proofHolds: boolean;
}

/** A token the fake controller issued: its text, and what is inside. */
export interface IssuedToken {
  text: string;
  token_id: string;
  secret: string;
}

/** Reports a node sent, as they arrive. */
export interface ReportTap {
  readonly received: readonly Report[];
  /** The first report (already received or still to come) that `matches`, within `timeoutMs`. */
  next(matches: (report: Report) => boolean, timeoutMs?: number): Promise<Report>;
  stop(): void;
}

/**
 * Plays the controller's part against a test broker, in a test's own few lines: issues tokens
 * (adding the token's one-time broker user), answers enrolment requests as told, lets an
 * enrolled node in (its broker user and its durable consumer), publishes signed declarations,
 * and listens to reports. It records what it was asked; it decides nothing for itself.
 */
export class FakeController {
  readonly enrolments: ReceivedEnrolment[] = [];
  private readonly subscriptions: Subscription[] = [];

  private constructor(
    readonly broker: TestBroker,
    readonly connection: NatsConnection,
    readonly key: SigningKeyPair,
  ) {}

  /** Connects as the controller and makes the declaration stream, as a real one does at start. */
  static async start(broker: TestBroker): Promise<FakeController> {
    await ready();
    const connection = await broker.connectAsController();
    const jsm = await jetstreamManager(connection);
    await jsm.streams.add({ name: DECLARATION_STREAM, subjects: [DECLARATION_SUBJECTS], max_msgs_per_subject: 1 }).catch(async (error: unknown) => {
      // Another test file's controller in the same broker made it already.
      if (!(await jsm.streams.info(DECLARATION_STREAM).then(() => true, () => false))) throw error;
    });
    return new FakeController(broker, connection, generateSigningKeyPair());
  }

  /** A token for this broker and this controller's key, its one-time broker user added. */
  async issueToken(options: { withBrokerUser?: boolean } = {}): Promise<IssuedToken> {
    const { token_id, secret } = generateTokenCredentials();
    if (options.withBrokerUser ?? true) await this.broker.addEnrolmentUser(token_id, brokerPasswordFor(secret, token_id));
    const text = encodeToken({
      broker_url: this.broker.url,
      broker_fingerprint: this.broker.fingerprint,
      controller_public_key: this.key.public_key,
      token_id,
      secret,
    });
    return { text, token_id, secret };
  }

  /** Answers the enrolment request for `tokenId` with what `decide` says. */
  answerEnrolment(tokenId: string, decide: (received: ReceivedEnrolment) => EnrolReply | Promise<EnrolReply>): void {
    const subscription = this.connection.subscribe(enrolmentSubject(tokenId), {
      callback: (error, message) => {
        if (error !== null) return;
        const request = JSON.parse(new TextDecoder().decode(message.data)) as EnrolRequest;
        const received = { request, proofHolds: proofHolds(request) };
        this.enrolments.push(received);
        void Promise.resolve(decide(received)).then((reply) => message.respond(canonicalJson(reply)));
      },
    });
    this.subscriptions.push(subscription);
  }

  /** Lets an enrolled node in: its durable declaration consumer and its nkey user on the broker. */
  async admitNode(node: string, nkeyPublic: string): Promise<void> {
    await this.makeConsumer(node);
    await this.broker.addNodeUser(node, nkeyPublic);
  }

  /** The node's durable consumer, filtered to its declarations, acknowledged one by one. */
  async makeConsumer(node: string): Promise<void> {
    const jsm = await jetstreamManager(this.connection);
    await jsm.consumers.add(DECLARATION_STREAM, {
      durable_name: declarationConsumer(node),
      filter_subject: declarationSubject(node),
      ack_policy: AckPolicy.Explicit,
      ack_wait: DECLARATION_ACK_WAIT_NS,
      deliver_policy: DeliverPolicy.All,
    });
  }

  /** Signs `declaration` (with this controller's key unless told) and publishes it to the node. */
  async declare(declaration: Declaration, signingKey: string = this.key.secret_key): Promise<Envelope> {
    const envelope = sealEnvelope(declaration, signingKey);
    await this.publish(declaration.node, envelope);
    return envelope;
  }

  /** Publishes anything as the node's declaration, the way a controller (or a forger) would. */
  async publish(node: string, envelope: unknown): Promise<void> {
    const jsm = await jetstreamManager(this.connection);
    await jsm.jetstream().publish(declarationSubject(node), JSON.stringify(envelope));
  }

  /** Listens to a node's reports from now on. */
  reports(node: string): ReportTap {
    const received: Report[] = [];
    const waiting = new Set<() => void>();
    const subscription = this.connection.subscribe(reportSubject(node), {
      callback: (error, message) => {
        if (error !== null) return;
        received.push(JSON.parse(new TextDecoder().decode(message.data)) as Report);
        for (const wake of waiting) wake();
      },
    });
    this.subscriptions.push(subscription);
    return {
      received,
      next: (matches, timeoutMs = 15_000) =>
        new Promise<Report>((resolve, reject) => {
          const check = (): void => {
            const found = received.find(matches);
            if (found === undefined) return;
            clearTimeout(timer);
            waiting.delete(check);
            resolve(found);
          };
          const timer = setTimeout(() => {
            waiting.delete(check);
            reject(new Error(`no matching report from ${node} within ${timeoutMs} ms; received ${JSON.stringify(received.map((r) => ({ generation: r.generation, refused: r.refused?.reason, results: r.results.length })))}`));
          }, timeoutMs);
          waiting.add(check);
          check();
        }),
      stop: () => subscription.unsubscribe(),
    };
  }

  /** Stops listening and closes the controller's connection. */
  async stop(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    await this.connection.close();
  }
}

function proofHolds(request: EnrolRequest): boolean {
  const { proof, ...signed } = request;
  const signature = decodeBase64(proof);
  const key = decodeBase64(request.public_key);
  if (signature === undefined || key === undefined || key.length !== 32 || signature.length !== 64) return false;
  return sodium().crypto_sign_verify_detached(signature, canonicalBytes(signed), key) && nkeyPublicOf(key) === request.nkey_public;
}
