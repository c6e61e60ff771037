/**
 * The mesh's cryptography, for both actor trees: keys, signed envelopes, sealed secrets,
 * certificate fingerprints and enrolment tokens. Only sealed boxes need libsodium: `await ready()`
 * once before sealing or opening one; keys and signatures are Node's own (ed25519.ts).
 */
export { ready, isReady, sodium, SodiumNotReady, type Sodium } from './sodium';
export {
  generateSigningKeyPair,
  publicKeyOf,
  publicKeyBytes,
  signingKeyPairOf,
  KEY_BYTES,
  type KeyInput,
  type SigningKeyPair,
  type NodeIdentity,
} from './keys';
export { generateNodeIdentity, nkeyPublicOf, nkeySeedOf, nkeyPairOf } from './nkey';
export { readKeyFile, writeKeyFile, type ReadKeyFileOptions, type WriteKeyFileOptions } from './key-file';
export { KeyMalformed, KeyFileTooOpen, KeyFileMissing, KeyFileMalformed, KeyFileExists } from './key-errors';
export { sealEnvelope, openEnvelope, openEnvelopeWithDigest, envelopeDigest, type OpenedEnvelope } from './envelope';
export {
  EnvelopeMalformed,
  ForeignSigner,
  SignatureInvalid,
  PayloadNotCanonical,
  DECLARATION_CONTEXT,
  type EnvelopeContext,
} from './envelope-errors';
export { sealToNode, openSealed, SealedSecretUnopenable } from './seal';
export { certificateFingerprint, fingerprintsEqual, normaliseFingerprint, CertificateUnreadable } from './fingerprint';
export { encodeToken, decodeToken, tokenSecretHash, brokerPasswordFor, generateTokenCredentials, TOKEN_PREFIX } from './token';
export { TokenMistyped, TokenMalformed } from './token-errors';
export { encodeBase64, decodeBase64, encodeBase64Url, decodeBase64Url } from './base64';
