import { isReady, ready, sodium, SodiumNotReady } from './sodium';
import { generateSigningKeyPair } from './keys';
import { openSealed, sealToNode } from './seal';

// Jest loads each test file into a fresh module registry, so nothing has awaited ready() here yet.
describe('libsodium readiness', () => {
  it('refuses to seal before ready() and names the call that is missing', () => {
    const node = generateSigningKeyPair();
    expect(isReady()).toBe(false);
    expect(() => sealToNode('secret', node.public_key)).toThrow(SodiumNotReady);
    expect(() => sodium()).toThrow(/await ready\(\)/);
  });

  it('signs without it: Ed25519 is Node\'s own, libsodium is only for sealed boxes', () => {
    expect(isReady()).toBe(false);
    expect(generateSigningKeyPair().public_key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });

  it('seals once ready() has resolved', async () => {
    await ready();
    const node = generateSigningKeyPair();
    expect(isReady()).toBe(true);
    expect(new TextDecoder().decode(openSealed(sealToNode('secret', node.public_key), node.secret_key))).toBe('secret');
  });
});
