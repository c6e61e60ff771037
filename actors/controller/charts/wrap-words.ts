/**
 * Breaks text into lines of at most `width` characters at spaces, for chart labels (neither
 * Graphviz nor Mermaid wraps them). A word longer than `width` gets a line of its own, unbroken.
 */
export function wrapWords(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}
