import net from 'node:net';
import tls from 'node:tls';

/** Where to probe a broker and the certificate it must present. */
export interface BrokerTlsProbeTarget {
  host: string;
  port: number;
  /** The broker's certificate (PEM): the handshake must verify against it. */
  caPem: string;
  timeoutMs?: number;
  /** Abandons the probe (it rejects, and its connection is closed). */
  signal?: AbortSignal;
}

/**
 * One check that a broker is up the way clients need it: it sends its INFO line saying TLS is
 * required (nats-server 2.9 speaks first, in plain text) and then completes a TLS handshake with
 * the expected certificate. Sends no credentials. Rejects with the reason when any step fails.
 */
export function probeBrokerTls(target: BrokerTlsProbeTarget): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: target.host, port: target.port });
    let secure: tls.TLSSocket | undefined;
    let settled = false;
    let succeeded = false;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      target.signal?.removeEventListener('abort', abandon);
      secure?.destroy();
      socket.destroy();
      if (error) reject(error);
      else resolve();
    };
    const timer = setTimeout(() => finish(succeeded ? undefined : new Error(`no TLS handshake within ${target.timeoutMs ?? 1000} ms`)), target.timeoutMs ?? 1000);
    const abandon = (): void => finish(new Error('the probe was abandoned'));
    if (target.signal?.aborted) abandon();
    target.signal?.addEventListener('abort', abandon, { once: true });
    let received = '';
    const onData = (chunk: Buffer): void => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n');
      if (end < 0) {
        if (received.length > 64 * 1024) finish(new Error('the broker sent no INFO line'));
        return;
      }
      socket.off('data', onData);
      const line = received.slice(0, end);
      if (!line.startsWith('INFO ')) return finish(new Error(`the broker's first line is not INFO: ${line.slice(0, 80)}`));
      let info: { tls_required?: unknown };
      try {
        info = JSON.parse(line.slice(5)) as { tls_required?: unknown };
      } catch {
        return finish(new Error('the broker\'s INFO line is not JSON'));
      }
      if (info.tls_required !== true) return finish(new Error('the broker does not require TLS'));
      // The chain is verified against caPem; the host name is not, since a probe may reach a
      // broker listening on every address through 127.0.0.1.
      secure = tls.connect({ socket, ca: target.caPem, checkServerIdentity: () => undefined });
      // Closed politely once the handshake is done: destroying it at once can drop the last
      // handshake message, and the broker would log a handshake error for every probe.
      secure.once('secureConnect', () => {
        succeeded = true;
        secure?.end();
      });
      secure.once('close', () => finish(succeeded ? undefined : new Error('the broker closed the connection during the TLS handshake')));
      secure.once('error', (error) => finish(succeeded ? undefined : error));
    };
    socket.on('data', onData);
    socket.once('error', (error) => finish(error));
    socket.once('close', () => finish(succeeded ? undefined : new Error('the broker closed the connection')));
  });
}
