import type { ControllerConfig } from '../../../schema/controller-config';

/**
 * Every address the mesh's broker answers on, `broker.url` first: one for a single server,
 * each server's for a cluster (mesh.json `broker.servers`).
 */
export function brokerUrlsOf(config: Pick<ControllerConfig, 'broker'>): string[] {
  return [config.broker.url, ...(config.broker.servers ?? []).filter((url) => url !== config.broker.url)];
}
