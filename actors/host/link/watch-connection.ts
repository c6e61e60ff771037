import type { NatsConnection } from '@nats-io/transport-node';

/**
 * The link machine's `watch`: resolves, with why, when the connection has ended — closed by
 * the broker, cut off, or closed by the client because its pings went unanswered (see
 * deadLinkPings). Never rejects: every end is the same news to the machine. The watch owns the
 * connection while the link lasts, so aborting `signal` (leaving `linked`) closes it.
 */
export async function watchConnection(connection: Pick<NatsConnection, 'closed' | 'close' | 'status'>, signal: AbortSignal): Promise<string> {
  let stale = false;
  void (async () => {
    for await (const status of connection.status()) {
      if (status.type === 'staleConnection') stale = true;
    }
  })().catch(() => undefined);
  const close = (): void => { void connection.close().catch(() => undefined); };
  if (signal.aborted) close();
  else signal.addEventListener('abort', close, { once: true });
  const ended = await connection.closed().catch((error: unknown) => error);
  signal.removeEventListener('abort', close);
  if (stale) return 'the broker stopped answering pings';
  if (ended instanceof Error) return ended.message;
  return 'the broker closed the connection';
}
