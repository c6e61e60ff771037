import { createUser, fromPublic, Prefix } from '@nats-io/nkeys';
// The codec nkeys itself uses, reached directly so the encoding is checked against theirs.
import { Codec } from '@nats-io/nkeys/lib/codec';
import { decodeBase64, encodeBase64 } from './base64';
import { generateNodeIdentity, nkeyPairOf, nkeyPublicOf, nkeySeedOf } from './nkey';
import { publicKeyOf } from './keys';
import { ready } from './sodium';

beforeAll(ready);

describe('nkeys of a node identity', () => {
  it("signs the server's nonce with a key pair that verifies against the node's 'U…' public key", () => {
    const identity = generateNodeIdentity();
    const nonce = new TextEncoder().encode('a-server-nonce-8Jk2');
    const signature = nkeyPairOf(identity.secret_key).sign(nonce);
    const verifier = fromPublic(nkeyPublicOf(identity.public_key));
    expect(verifier.verify(nonce, signature)).toBe(true);
    expect(verifier.verify(new TextEncoder().encode('another nonce'), signature)).toBe(false);
  });

  it('gives the nkey of the same Ed25519 key as the nkeys library does', () => {
    for (let i = 0; i < 20; i += 1) {
      const identity = generateNodeIdentity();
      const seed = decodeBase64(identity.secret_key) as Uint8Array;
      expect(nkeyPublicOf(identity.public_key)).toBe(new TextDecoder().decode(Codec.encode(Prefix.User, decodeBase64(identity.public_key) as Uint8Array)));
      expect(new TextDecoder().decode(nkeySeedOf(identity.secret_key))).toBe(new TextDecoder().decode(Codec.encodeSeed(Prefix.User, seed)));
      expect(nkeyPairOf(identity.secret_key).getPublicKey()).toBe(identity.nkey_public);
    }
  });

  it('reads a key pair made by nkeys back to the same Ed25519 key', () => {
    const user = createUser();
    const { buf: seed } = Codec.decodeSeed(user.getSeed());
    expect(nkeyPublicOf(publicKeyOf(seed))).toBe(user.getPublicKey());
  });

  it('is stable: a fixed seed always gives the same user nkey', () => {
    const seed = new Uint8Array(32).fill(7);
    const publicKey = publicKeyOf(seed);
    expect(nkeyPublicOf(publicKey)).toBe(nkeyPublicOf(decodeBase64(publicKey) as Uint8Array));
    expect(nkeyPublicOf(publicKey)).toBe(PINNED_NKEY_OF_SEED_7);
    expect(encodeBase64(seed)).toBe('BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=');
  });
});

// Pinned once from nkeys' own codec; a change here would strand every enrolled node's broker user.
const PINNED_NKEY_OF_SEED_7 = 'UDVEU3DD4KOFECV66VIHWEZOYX4ZKR3WV27L464SIIPOU2IUI3JCYSJF';
