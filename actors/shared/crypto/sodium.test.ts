import { isReady, ready, sodium, SodiumNotReady } from './sodium';
import { generateSigningKeyPair } from './keys';

// Jest loads each test file into a fresh module registry, so nothing has awaited ready() here yet.
describe('libsodium readiness', () => {
  it('refuses to sign before ready() and names the call that is missing', () => {
    expect(isReady()).toBe(false);
    expect(() => generateSigningKeyPair()).toThrow(SodiumNotReady);
    expect(() => sodium()).toThrow(/await ready\(\)/);
  });

  it('works once ready() has resolved', async () => {
    await ready();
    expect(isReady()).toBe(true);
    expect(typeof sodium().crypto_sign_detached).toBe('function');
    expect(generateSigningKeyPair().public_key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });
});
