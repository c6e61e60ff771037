import { normalizeImageReference, sameImage } from './image-reference';

describe('image references', () => {
  test.each([
    ['nginx', 'docker.io/library/nginx:latest'],
    ['nginx:1.27', 'docker.io/library/nginx:1.27'],
    ['library/nginx:1.27', 'docker.io/library/nginx:1.27'],
    ['index.docker.io/library/nginx:1.27', 'docker.io/library/nginx:1.27'],
    ['grafana/grafana:11.0.0', 'docker.io/grafana/grafana:11.0.0'],
    ['quay.io/prometheus/node-exporter', 'quay.io/prometheus/node-exporter:latest'],
    ['localhost:5000/app:2', 'localhost:5000/app:2'],
    ['localhost/app', 'localhost/app:latest'],
    ['nginx@sha256:0123', 'docker.io/library/nginx@sha256:0123'],
    ['nginx:1.27@sha256:0123', 'docker.io/library/nginx:1.27@sha256:0123'],
  ])('%s is %s in full', (short, full) => {
    expect(normalizeImageReference(short)).toBe(full);
  });

  test('a short name and the full name Podman records are the same image; another tag is not', () => {
    expect(sameImage('nginx:1.27', 'docker.io/library/nginx:1.27')).toBe(true);
    expect(sameImage('nginx', 'nginx:latest')).toBe(true);
    expect(sameImage('nginx:1.27', 'nginx:1.28')).toBe(false);
    expect(sameImage('nginx:1.27', 'quay.io/nginx/nginx:1.27')).toBe(false);
  });
});
