// Recognises a fence line (``` or ~~~, optionally a language and a header).
// Hand-written rather than a regular expression: the obvious pattern has two
// adjacent overlapping repetitions and backtracks quadratically on long lines.

export interface FenceLine {
  /** The fence itself (`~~~~`, ```` ``` ````); the block closes on exactly this. */
  fence: string;
  lang: string | undefined;
  /** Text after the language (the spoiler title), if any. */
  header: string | undefined;
}

function isLangChar(c: string): boolean {
  // Letters, digits and `_+,-./#` (the comma comes from a `+-.` range in
  // Zulip's pattern; matching it keeps fence detection identical).
  return /[a-zA-Z0-9_+,\-./#]/.test(c);
}

export function parseFenceLine(line: string): FenceLine | undefined {
  const fenceChar = line[0];
  if (fenceChar !== '`' && fenceChar !== '~') return undefined;
  let i = 0;
  while (line[i] === fenceChar) i++;
  if (i < 3) return undefined;
  const fence = line.slice(0, i);
  while (line[i] === ' ') i++;
  if (i === line.length) return { fence, lang: undefined, header: undefined };
  if (line[i] === '{') i++;
  if (line[i] === '.') i++;
  const langStart = i;
  while (i < line.length && isLangChar(line[i] as string)) i++;
  if (i === langStart) return undefined;
  const lang = line.slice(langStart, i);
  while (line[i] === ' ') i++;
  if (i === line.length) return { fence, lang, header: undefined };
  const rest = line.slice(i);
  if (rest.includes('`') || rest.includes('~')) return undefined;
  return { fence, lang, header: rest };
}
