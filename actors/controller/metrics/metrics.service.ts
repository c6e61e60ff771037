import http from 'node:http';
import type { Registry } from 'prom-client';
import type { ControllerLog } from '../logs/log-fields';
import type { ControllerService } from '../serve/service-ledger';
import { MetricsListenFailed } from './metrics-errors';
import { metricsUrl, type MetricsListen } from './metrics-listen';

/**
 * The tree's `metrics` child: an HTTP server answering `GET /metrics` from `registry` in the
 * Prometheus text format, and nothing else (404, or 405 for another method). It does not need the
 * lease, so a standby is scraped too and says so (lease_acting 0). Failing to listen fails the
 * child, which its supervisor restarts after a backoff and, if the address stays taken, gives up
 * on, naming `metrics` and the address; a server that errors later fails it the same way.
 */
export function metricsService(listen: MetricsListen, registry: Registry, log: ControllerLog): ControllerService {
  const address = `${listen.host}:${listen.port}`;
  return {
    id: 'metrics',
    needsLease: false,
    start: async () => {
      const server = http.createServer((request, response) => {
        const path = (request.url ?? '/').split('?')[0];
        if (path !== '/metrics') {
          response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: the metrics are at /metrics\n');
          return;
        }
        if (request.method !== 'GET' && request.method !== 'HEAD') {
          response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('only GET /metrics\n');
          return;
        }
        registry.metrics().then(
          (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(request.method === 'HEAD' ? undefined : text),
          (error: unknown) => {
            log(`metrics: a scrape failed: ${(error as Error)?.message ?? String(error)}`, { level: 'warn' });
            response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('the metrics could not be read; the controller log says why\n');
          },
        );
      });
      // A scraper that never reads must not hold a socket for ever.
      server.requestTimeout = 30_000;
      server.headersTimeout = 10_000;
      await new Promise<void>((resolve, reject) => {
        const refused = (error: NodeJS.ErrnoException): void => {
          reject(new MetricsListenFailed(address, error.code === 'EADDRINUSE' ? 'the port is in use' : error.code === 'EADDRNOTAVAIL' ? 'the address is not one of this machine\'s' : error.code === 'EACCES' ? 'not allowed to bind it' : error.message, error));
        };
        server.once('error', refused);
        server.listen(listen.port, listen.host, () => {
          server.off('error', refused);
          resolve();
        });
      });
      log(`metrics: serving ${metricsUrl(listen)}`, { url: metricsUrl(listen) });
      const failed = new Promise<never>((_, reject) => {
        server.once('error', (error) => reject(new MetricsListenFailed(address, error.message, error)));
      });
      failed.catch(() => undefined);
      return {
        failed,
        stop: async () => {
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          });
        },
      };
    },
  };
}
