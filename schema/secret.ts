import * as z from 'zod';
import { base64DecodedBytes } from './bounds';

// A secret is a value the controller keeps encrypted and sends only sealed to one node's key.
// In module.json a file's content names it ({"secret": "NAME"}); in a declaration the controller
// has put the sealed box in its place ({"sealed": {…}}), and only that node can open it.

/**
 * The most a secret may hold: 64 KiB. A password, a token, a private key or a small credentials
 * file; a sealed copy of it goes into every target node's declaration, which the broker bounds
 * at 1 MiB, so a secret much larger would crowd out the rest of the declaration.
 */
export const MAX_SECRET_BYTES = 64 * 1024;

/** A secret's name within its module: lowercase letters, digits and "._-", like an action's. */
export const SecretName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, { error: 'expected a secret name: lowercase letters, digits and "._-", like "db-password"' });
/** See {@link SecretName}. */
export type SecretName = z.infer<typeof SecretName>;

/** A file's content named by a module's secret: resolved and sealed by the controller at compose. */
export const SecretContent = z.strictObject({ secret: SecretName });
/** See {@link SecretContent}. */
export type SecretContent = z.infer<typeof SecretContent>;

// A sealed box is the value plus 48 bytes (crypto_box_SEALBYTES), base64.
const MAX_BOX_BYTES = MAX_SECRET_BYTES + 48;

/**
 * A file's content sealed to the node the declaration is for: which secret (`module/name`), at
 * which version, and the libsodium sealed box. Nothing but the node's own key opens the box;
 * the host opens it in memory when it compares or writes the file, and keeps only this form.
 */
export const SealedContent = z.strictObject({
  sealed: z.strictObject({
    secret: z.string().regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\/[a-z0-9][a-z0-9._-]{0,63}$/, { error: 'expected the secret as "module/name"' }),
    version: z.int().min(1, { error: 'expected a version of 1 or more' }),
    box: z
      .base64({ error: 'expected the sealed box as base64' })
      .refine((box) => base64DecodedBytes(box) >= 48 && base64DecodedBytes(box) <= MAX_BOX_BYTES, { error: `expected a sealed box of 48 to ${MAX_BOX_BYTES} bytes` }),
  }),
});
/** See {@link SealedContent}. */
export type SealedContent = z.infer<typeof SealedContent>;

/**
 * True when a file mode lets every account on the machine read, write or run the file. A
 * secret written so is no secret; sealing it to the node would protect nothing.
 */
export function modeOpensToOthers(mode: string): boolean {
  return (parseInt(mode, 8) & 0o007) !== 0;
}
