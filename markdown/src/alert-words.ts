// Alert words: which of the given words occur in the message as words (case
// insensitively, delimited by whitespace or common punctuation).

const ALLOWED_BEFORE = new Set([' ', '\n', '(', '"', '.', ',', "'", ';', '[', '*', '`', '>']);
const ALLOWED_AFTER = new Set([' ', '\n', ')', '"', '?', ':', '.', ',', "'", ';', ']', '!', '*', '`']);

export function findAlertWords(content: string, words: readonly string[]): string[] {
  const lower = content.toLowerCase();
  const found: string[] = [];
  for (const word of new Set(words.map((w) => w.toLowerCase()).filter((w) => w))) {
    for (let at = lower.indexOf(word); at >= 0; at = lower.indexOf(word, at + 1)) {
      const end = at + word.length;
      const startOk = at === 0 || ALLOWED_BEFORE.has(lower[at - 1] as string);
      const endOk = end >= lower.length || ALLOWED_AFTER.has(lower[end] as string);
      if (startOk && endOk) {
        found.push(word);
        break;
      }
    }
  }
  return found;
}
