import { X509Certificate } from 'node:crypto';
import { createConnection, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { certificateFingerprint } from '../crypto';
import { parseBrokerAddress } from './broker-address';
import { BrokerNotNats, BrokerUnreachable, BrokerWithoutTls } from './bus-errors';
import { describeSocketError } from './socket-error';

/** The certificate a broker presents, as the probe read it. */
export interface BrokerCertificate {
  /** SHA-256 of the certificate's DER bytes, lower-case hex: what a token pins. */
  fingerprint: string;
  /** The certificate in PEM, to serve as the only trust anchor of the real connection. */
  certPem: string;
  /** Its subject, one `key=value` a line, as Node prints it. */
  subject: string;
  /** Start of its validity, as Node prints it ("Dec  1 03:05:17 2026 GMT"). */
  validFrom: string;
  /** End of its validity, as Node prints it. */
  validTo: string;
}

/** How long the probe may take, and how to call it off. */
export interface ProbeOptions {
  /** The whole probe (dial, greeting, handshake) gives up after this long. Default 5000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 5000;
/** A NATS INFO line is a few hundred bytes; anything this long is not a NATS greeting. */
const MAX_GREETING_BYTES = 64 * 1024;
/** How long a broker has to close its side after the probe has said goodbye. */
const HANG_UP_GRACE_MS = 1000;

/**
 * Reads the certificate a NATS broker presents without sending it anything but a TLS
 * ClientHello. nats-server (without `handshake_first`) greets in plain text with an INFO line,
 * then expects the client to start TLS; the probe reads that line, runs the handshake without
 * judging the certificate, keeps the certificate and hangs up. No CONNECT, so no credentials.
 *
 * Fails with BrokerUnreachable (refused, timed out, cut off: retryable), BrokerNotNats or
 * BrokerWithoutTls.
 */
export function probeBrokerCertificate(url: string, options: ProbeOptions = {}): Promise<BrokerCertificate> {
  const address = parseBrokerAddress(url);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (options.signal?.aborted === true) return Promise.reject(new BrokerUnreachable(url, 'the attempt was called off', options.signal.reason));
  return new Promise<BrokerCertificate>((resolve, reject) => {
    let settled = false;
    let tlsSocket: TLSSocket | undefined;
    const socket: Socket = createConnection({ host: address.host, port: address.port });
    const finish = (error: Error | undefined, certificate?: BrokerCertificate): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (error !== undefined) {
        tlsSocket?.destroy();
        socket.destroy();
        reject(error);
      } else {
        hangUp(tlsSocket as TLSSocket);
        resolve(certificate as BrokerCertificate);
      }
    };
    const onAbort = (): void => finish(new BrokerUnreachable(url, 'the attempt was called off', options.signal?.reason));
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => finish(new BrokerUnreachable(url, `no answer within ${timeoutMs} ms`)), timeoutMs);

    socket.setNoDelay(true);
    socket.on('error', (error) => finish(new BrokerUnreachable(url, describeSocketError(error), error)));
    socket.on('close', () => finish(new BrokerUnreachable(url, 'the broker closed the connection before its certificate was read')));

    let greeting = Buffer.alloc(0);
    const onGreeting = (chunk: Buffer): void => {
      greeting = Buffer.concat([greeting, chunk]);
      const end = greeting.indexOf('\r\n');
      if (end === -1) {
        if (greeting.length > MAX_GREETING_BYTES) finish(new BrokerNotNats(url, greeting.subarray(0, 80).toString('latin1')));
        return;
      }
      socket.off('data', onGreeting);
      const line = greeting.subarray(0, end).toString('utf8');
      const info = parseInfo(line);
      if (info === undefined) return finish(new BrokerNotNats(url, line.slice(0, 80)));
      if (info.tls_required !== true && info.tls_available !== true) return finish(new BrokerWithoutTls(url));
      startTls();
    };
    socket.on('data', onGreeting);

    const startTls = (): void => {
      // rejectUnauthorized is off because judging the certificate is this function's caller's
      // job (by fingerprint, not by chain or name); what makes that safe is that nothing but
      // the handshake is ever written to this socket.
      tlsSocket = tlsConnect({ socket, servername: address.servername, rejectUnauthorized: false });
      tlsSocket.on('error', (error) => finish(new BrokerUnreachable(url, `the TLS handshake failed: ${describeSocketError(error)}`, error)));
      tlsSocket.once('secureConnect', () => {
        const peer = tlsSocket?.getPeerX509Certificate();
        if (peer === undefined) return finish(new BrokerUnreachable(url, 'the broker presented no certificate'));
        finish(undefined, describeCertificate(peer));
      });
    };
  });
}

/**
 * Closes the probe's connection with a TLS close_notify rather than a reset, so the broker
 * sees a client that finished its handshake and left, and the client's last handshake message
 * is not thrown away with the socket. A broker that never closes its side is cut off.
 */
function hangUp(socket: TLSSocket): void {
  socket.on('error', () => undefined);
  const cutOff = setTimeout(() => socket.destroy(), HANG_UP_GRACE_MS);
  cutOff.unref();
  socket.once('close', () => clearTimeout(cutOff));
  socket.end();
}

function describeCertificate(certificate: X509Certificate): BrokerCertificate {
  return {
    fingerprint: certificateFingerprint(certificate.raw),
    certPem: certificate.toString(),
    subject: certificate.subject,
    validFrom: certificate.validFrom,
    validTo: certificate.validTo,
  };
}

interface Info {
  tls_required?: unknown;
  tls_available?: unknown;
}

function parseInfo(line: string): Info | undefined {
  if (!line.startsWith('INFO ')) return undefined;
  try {
    const info: unknown = JSON.parse(line.slice('INFO '.length));
    return typeof info === 'object' && info !== null && !Array.isArray(info) ? (info as Info) : undefined;
  } catch {
    return undefined;
  }
}
