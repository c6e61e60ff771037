/**
 * The text of a thrown value for a log line or a report: an Error's message, or the value as
 * text (code may throw anything, and a report must still say something).
 */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
