import { generateNodeIdentity } from './nkey';
import { KeyMalformed } from './key-errors';
import { decodeBase64, encodeBase64 } from './base64';
import { openSealed, SealedSecretUnopenable, sealToNode } from './seal';
import { ready } from './sodium';

beforeAll(ready);

describe('secrets sealed to a node', () => {
  it('opens with the node seed the box was sealed to', () => {
    const node = generateNodeIdentity();
    const secret = Uint8Array.from({ length: 40 }, (_, i) => (i * 13) & 0xff);
    expect(openSealed(sealToNode(secret, node.public_key), node.secret_key)).toEqual(secret);
    expect(new TextDecoder().decode(openSealed(sealToNode('wg-private-key', node.public_key), node.secret_key))).toBe('wg-private-key');
  });

  it("does not open with another node's key", () => {
    const node = generateNodeIdentity();
    const other = generateNodeIdentity();
    const box = sealToNode('for node one only', node.public_key);
    expect(() => openSealed(box, other.secret_key)).toThrow(SealedSecretUnopenable);
    expect(() => openSealed(box, other.secret_key)).toThrow(/sealed to another key/);
  });

  it('refuses a box altered after sealing', () => {
    const node = generateNodeIdentity();
    const box = decodeBase64(sealToNode('secret', node.public_key)) as Uint8Array;
    box[box.length - 1] ^= 1;
    expect(() => openSealed(encodeBase64(box), node.secret_key)).toThrow(SealedSecretUnopenable);
    expect(() => openSealed('%%%', node.secret_key)).toThrow(/not base64/);
    expect(() => openSealed(new Uint8Array(10), node.secret_key)).toThrow(/shorter than any sealed box/);
  });

  it('seals the same secret differently each time, so boxes cannot be compared', () => {
    const node = generateNodeIdentity();
    expect(sealToNode('same', node.public_key)).not.toBe(sealToNode('same', node.public_key));
  });

  it('refuses to seal to a public key that is not a point on the curve', () => {
    expect(() => sealToNode('secret', new Uint8Array(32))).toThrow(KeyMalformed);
  });
});
