const MAX_WORD = 512;

/**
 * A name or version read off the machine, made fit for the Inventory contract: control
 * characters become `?`, surrounding space goes, and it is cut at 512 characters. Undefined
 * when nothing is left, so the caller skips the entry rather than reporting a blank.
 */
export function inventoryWord(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const cleaned = [...text].map((c) => (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f ? '?' : c)).join('').trim();
  if (cleaned === '') return undefined;
  return cleaned.length > MAX_WORD ? cleaned.slice(0, MAX_WORD) : cleaned;
}
