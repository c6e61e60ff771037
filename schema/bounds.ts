/**
 * The most content one file resource may hold: 8 MiB of bytes (text as UTF-8, base64 once
 * decoded). Enough for any configuration file, certificate bundle or script; anything larger is
 * a package's job. A pass holds a few copies of a content at once (the declaration, the bytes
 * written, the read-back), so this bound keeps one resource from costing the host hundreds of
 * MB, and a declaration over it is refused whole before anything is written.
 */
export const MAX_CONTENT_BYTES = 8 * 1024 * 1024;

/**
 * The largest declaration the host takes: 32 MiB, a hand-applied file as read from disk and a
 * pushed declaration's signed payload alike (four contents at their bound). The host holds a
 * declaration in memory about three times over while it applies it (its text, the parsed
 * resources, the bytes being written). A pushed declaration is further bounded by the broker's
 * largest message (NATS max_payload, 1 MiB unless the broker is configured otherwise).
 */
export const MAX_DECLARATION_BYTES = 32 * 1024 * 1024;

/** A byte count as a person reads it: "8 MiB", "52,428,800 bytes". */
export function bytesText(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes.toLocaleString('en-US')} bytes`;
}

/** How many bytes a padded base64 text decodes to, without decoding it. */
export function base64DecodedBytes(text: string): number {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}
