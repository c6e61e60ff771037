/**
 * An image reference in full (`nginx:1.27` → `docker.io/library/nginx:1.27`), so the name a
 * declaration uses and the one an engine records compare equal: Docker keeps what it was
 * given, Podman records the full name. A reference without a tag or digest means `latest`.
 */
export function normalizeImageReference(reference: string): string {
  let name = reference;
  let digest = '';
  const at = name.indexOf('@');
  if (at >= 0) {
    digest = name.slice(at);
    name = name.slice(0, at);
  }
  let tag = '';
  const colon = name.lastIndexOf(':');
  if (colon > name.lastIndexOf('/')) {
    tag = name.slice(colon);
    name = name.slice(0, colon);
  }
  if (tag === '' && digest === '') tag = ':latest';
  const parts = name.split('/');
  const first = parts[0] ?? '';
  // The first part is a registry only when it looks like a host: a dot, a port, or localhost.
  const hasRegistry = parts.length > 1 && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (!hasRegistry) parts.unshift('docker.io');
  if (parts[0] === 'index.docker.io') parts[0] = 'docker.io';
  if (parts[0] === 'docker.io' && parts.length === 2) parts.splice(1, 0, 'library');
  return `${parts.join('/')}${tag}${digest}`;
}

/** True when two references name the same image once both are written in full. */
export function sameImage(a: string, b: string): boolean {
  return normalizeImageReference(a) === normalizeImageReference(b);
}
