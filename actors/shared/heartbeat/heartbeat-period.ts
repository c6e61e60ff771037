import type { HostKind } from '../../../schema/resource';

/**
 * How often a host of each kind says it is still here. A resident host (an init keeps it
 * running) beats every 30 s, so "last seen" means something within a minute or two. An
 * episodic host (a phone) runs only while its platform lets it and pays for every wake of its
 * radio, so it beats every 5 min; its silence says far less, and is judged by its own period.
 */
export const HEARTBEAT_PERIOD_MS: Readonly<Record<HostKind, number>> = Object.freeze({
  resident: 30_000,
  episodic: 300_000,
});

/** How many heartbeats in a row a node may miss before the controller shows it disconnected (seed 003: three intervals). */
export const MISSED_HEARTBEATS_BEFORE_DISCONNECTED = 3;

/** The silence after which a node of `kind` is shown disconnected: three of its periods, from `periods` (production's unless given). */
export function silenceBoundMs(kind: HostKind, periods: Readonly<Record<HostKind, number>> = HEARTBEAT_PERIOD_MS): number {
  return MISSED_HEARTBEATS_BEFORE_DISCONNECTED * periods[kind];
}
