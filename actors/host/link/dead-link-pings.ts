/** The NATS client's ping settings (`pingInterval`, `maxPingOut`). */
export interface PingSettings {
  pingInterval: number;
  maxPingOut: number;
}

/** 30 s: heartbeats found a dead connection in twenty or thirty seconds (seed 000), and still do. */
export const DEFAULT_DEAD_LINK_MS = 30_000;

/**
 * Client pings that close a connection whose broker has stopped answering within `deadLinkMs`.
 * The client pings every interval and gives up when `maxPingOut` pings are outstanding at the
 * next one, so a connection that goes silent just after a pong is closed (maxPingOut + 1)
 * intervals later, and one that goes silent just before a ping a little over maxPingOut
 * intervals later: with two pings out and a third of `deadLinkMs` between them, between two
 * thirds of `deadLinkMs` and `deadLinkMs`.
 */
export function deadLinkPings(deadLinkMs: number = DEFAULT_DEAD_LINK_MS): PingSettings {
  return { pingInterval: Math.max(1, Math.floor(deadLinkMs / 3)), maxPingOut: 2 };
}
