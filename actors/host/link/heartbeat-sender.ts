import type { NatsConnection } from '@nats-io/transport-node';
import { canonicalJson } from '../../../schema/canonical';
import { Heartbeat } from '../../../schema/heartbeat';
import type { InventoryAddress } from '../../../schema/inventory';
import { parseContract } from '../../../schema/parse';
import type { HostKind } from '../../../schema/resource';
import { heartbeatSubject } from '../../shared/bus/subjects';
import { HEARTBEAT_PERIOD_MS } from '../../shared/heartbeat/heartbeat-period';
import { runningVersion } from '../../shared/version';
import type { Deafness } from './declaration-intake';
import type { LinkClock } from './link-clock';
import { timestampOrNull, utcTimestamp } from '../../shared/time/utc-timestamp';

/** A resident host's period (HEARTBEAT_PERIOD_MS): often enough that "last seen" on the controller means something, rare enough to cost nothing. */
export const DEFAULT_HEARTBEAT_MS = HEARTBEAT_PERIOD_MS.resident;

/** What a heartbeat says, read fresh each time one is sent. */
export interface HeartbeatFacts {
  node: string;
  hostKind: HostKind;
  clock: LinkClock;
  /** When the last reconcile pass finished; null before the first. */
  lastReconcileAt(): Date | null;
  /** Seconds since the host process started. */
  uptimeSeconds(): number;
  now(): Date;
  /** While the host cannot hear its declarations (DeclarationIntake.deafness); never, unless given. */
  deafness?(): Deafness | null;
  /** The broker certificates the host pins now (current, then next); not said unless given. */
  brokerFingerprints?(): string[];
  /** The machine's addresses now (interfaceAddresses), read at each beat; not said unless given. */
  addresses?(): InventoryAddress[];
}

/** Heartbeats going out on one connection. */
export interface Heartbeats {
  stop(): void;
}

/**
 * The heartbeat for `now`, checked against the contract. The first of a link carries how long
 * the host was away before it (`first`); the rest say 0, since they are only sent while linked.
 */
export function buildHeartbeat(facts: HeartbeatFacts, first: boolean): Heartbeat {
  return parseContract(Heartbeat, {
    node: facts.node,
    sent_at: utcTimestamp(facts.now()),
    version_running: runningVersion(),
    host_kind: facts.hostKind,
    seconds_since_linked: first ? facts.clock.absenceBeforeLink() : 0,
    last_reconcile_at: timestampOrNull(facts.lastReconcileAt()),
    uptime_seconds: Math.max(0, Math.round(facts.uptimeSeconds())),
    ...deafPart(facts.deafness?.() ?? null),
    ...(facts.brokerFingerprints === undefined ? {} : { broker_fingerprints: facts.brokerFingerprints() }),
    ...(facts.addresses === undefined ? {} : { addresses: facts.addresses() }),
  }, 'heartbeat');
}

function deafPart(deafness: Deafness | null): Pick<Heartbeat, 'deaf'> {
  return deafness === null ? {} : { deaf: { since: utcTimestamp(deafness.since), reason: deafness.reason } };
}

/**
 * Sends a heartbeat on `mesh.node.<node>.heartbeat` at once (the controller hears the node is
 * back without waiting a period) and then every `everyMs`, until stopped. Called for each new
 * link and stopped when it ends, so heartbeats only ever go out on a working connection.
 */
export function startHeartbeats(connection: Pick<NatsConnection, 'publish'>, facts: HeartbeatFacts, everyMs: number = DEFAULT_HEARTBEAT_MS): Heartbeats {
  let first = true;
  const beat = (): void => {
    try {
      connection.publish(heartbeatSubject(facts.node), canonicalJson(buildHeartbeat(facts, first)));
      first = false;
    } catch {
      // A connection closing under the publish: the link is about to say so and stop this.
    }
  };
  beat();
  const timer = setInterval(beat, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
