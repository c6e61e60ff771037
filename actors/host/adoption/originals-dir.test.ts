import { keyAsFileName, originalsDirFor } from './originals-dir';

describe('originalsDirFor', () => {
  test('keeps a resource\'s original in a folder named after its key, under the state directory', () => {
    expect(originalsDirFor('/var/lib/mesh-host', 'file:/etc/docker/daemon.json')).toBe('/var/lib/mesh-host/originals/file:%2Fetc%2Fdocker%2Fdaemon.json');
    expect(originalsDirFor('/var/lib/mesh-host/', 'package:nginx')).toBe('/var/lib/mesh-host/originals/package:nginx');
  });
});

describe('keyAsFileName', () => {
  test('gives keys that differ only in how a path is split different names', () => {
    const names = ['file:/a_b', 'file:/a/b', 'file:/a%2Fb', 'file:/a b', 'directory:/a/b'].map(keyAsFileName);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).not.toContain('/');
  });

  test('encodes what is not plain ASCII, byte by byte', () => {
    expect(keyAsFileName('file:/etc/café')).toBe('file:%2Fetc%2Fcaf%C3%A9');
    expect(keyAsFileName('service:getty@tty1.service')).toBe('service:getty@tty1.service');
  });

  test('keeps a name for the longest key short enough for a file system, and still different per key', () => {
    const a = keyAsFileName(`file:/${'d/'.repeat(2000)}a`);
    const b = keyAsFileName(`file:/${'d/'.repeat(2000)}b`);
    expect(a.length).toBeLessThanOrEqual(200);
    expect(Buffer.byteLength(a)).toBe(a.length);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^file:%2Fd%2F.*~[0-9a-f]{16}$/);
  });
});
