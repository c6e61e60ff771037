/** The longest subject a briefing line may have (the briefing contract's limit). */
export const MAX_SUBJECT = 120;

/**
 * The subject of an adoption line: the resource key (`file:/etc/docker/daemon.json`), which is
 * also what the stored briefing keys its lines by. A key longer than {@link MAX_SUBJECT} keeps
 * its beginning (the shape and the top of the path) and its end (the name a person looks for),
 * and loses the middle.
 */
export function briefingSubject(key: string): string {
  if (key.length <= MAX_SUBJECT) return key;
  const tail = Math.floor((MAX_SUBJECT - 1) / 2);
  const head = MAX_SUBJECT - 1 - tail;
  return `${key.slice(0, head)}…${key.slice(key.length - tail)}`;
}
