import type { ContainerBackend } from './container-backend';
import { cliContainerBackend } from './cli-container-backend';

/**
 * Containers through the `podman` command line. Podman records image references in full
 * (`docker.io/library/nginx:1.27`), which the applier compares as equal to the short form; an
 * unqualified name that Podman's registries.conf resolves elsewhere (quay.io) will differ, so
 * declare images fully qualified for Podman machines.
 */
export function podmanBackend(options: { program?: string } = {}): ContainerBackend {
  return cliContainerBackend('podman', options.program ?? 'podman');
}
