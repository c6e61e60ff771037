import type { ContainerBackend } from './container-backend';
import { cliContainerBackend } from './cli-container-backend';

/** Containers through the `docker` command line (or another path to it). */
export function dockerBackend(options: { program?: string } = {}): ContainerBackend {
  return cliContainerBackend('docker', options.program ?? 'docker');
}
