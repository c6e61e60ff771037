import { decodeBase64, encodeBase64 } from './base64';
import { KeyMalformed } from './key-errors';
import { generateSigningKeyPair, publicKeyBytes, publicKeyOf, signingKeyPairOf } from './keys';
import { ready, sodium } from './sodium';

beforeAll(ready);

describe('signing keys', () => {
  it('generates a key pair whose secret is a 32-byte seed deriving its public half', () => {
    const pair = generateSigningKeyPair();
    expect(decodeBase64(pair.public_key)).toHaveLength(32);
    expect(decodeBase64(pair.secret_key)).toHaveLength(32);
    expect(publicKeyOf(pair.secret_key)).toBe(pair.public_key);
  });

  it('generates a different key pair each time', () => {
    expect(generateSigningKeyPair().secret_key).not.toBe(generateSigningKeyPair().secret_key);
  });

  it("accepts libsodium's 64-byte secret key as well as the seed", () => {
    const pair = sodium().crypto_sign_keypair();
    expect(publicKeyOf(pair.privateKey)).toBe(encodeBase64(pair.publicKey));
    expect(publicKeyOf(encodeBase64(pair.privateKey))).toBe(encodeBase64(pair.publicKey));
  });

  it('refuses a 64-byte secret key whose public half belongs to another key', () => {
    const mine = sodium().crypto_sign_keypair();
    const other = sodium().crypto_sign_keypair();
    const spliced = new Uint8Array(64);
    spliced.set(mine.privateKey.subarray(0, 32));
    spliced.set(other.publicKey, 32);
    expect(() => signingKeyPairOf(spliced)).toThrow(/public half does not belong/);
  });

  it('refuses keys of the wrong size or that are not base64, without quoting them', () => {
    expect(() => publicKeyBytes(encodeBase64(new Uint8Array(31)), 'the controller key')).toThrow(KeyMalformed);
    expect(() => publicKeyBytes(encodeBase64(new Uint8Array(31)), 'the controller key')).toThrow(/the controller key .*31 bytes, expected 32/);
    expect(() => signingKeyPairOf('not base64!')).toThrow(/not base64/);
    const secret = generateSigningKeyPair().secret_key;
    try {
      signingKeyPairOf(`${secret}x`);
      throw new Error('expected a refusal');
    } catch (error) {
      expect(error).toBeInstanceOf(KeyMalformed);
      expect(String((error as KeyMalformed).message)).not.toContain(secret);
    }
  });

  it('reads base64 only in its one canonical spelling', () => {
    expect(decodeBase64('QQ==')).toEqual(new Uint8Array([65]));
    expect(decodeBase64('QR==')).toBeUndefined();
    expect(decodeBase64('QQ')).toBeUndefined();
    expect(decodeBase64('Q Q==')).toBeUndefined();
  });
});
