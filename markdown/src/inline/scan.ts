// Small character-class and searching helpers shared by the inline patterns.

/** Word characters as Python's Unicode `\w` sees them. */
export function isWordChar(c: string | undefined): boolean {
  if (c === undefined) return false;
  const code = c.charCodeAt(0);
  // ASCII fast path; the Unicode classes only for the rest.
  if (code < 128) return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
  return /[\p{L}\p{N}_]/u.test(c);
}

export function isWhitespace(c: string | undefined): boolean {
  if (c === undefined) return false;
  const code = c.charCodeAt(0);
  if (code < 128) return code === 32 || (code >= 9 && code <= 13) || (code >= 28 && code <= 31);
  return /\s/.test(c);
}

/** `(?<![^\s'"({[/<])`: at the start, or after whitespace or an opening character. */
export function mentionBoundaryBefore(data: string, i: number): boolean {
  if (i === 0) return true;
  const c = data[i - 1] as string;
  return isWhitespace(c) || `'"({[/<`.includes(c);
}

/** `(?<![^\s'"(,:<])`: the boundary for channel links and bare URLs. */
export function linkBoundaryBefore(data: string, i: number): boolean {
  if (i === 0) return true;
  const c = data[i - 1] as string;
  return isWhitespace(c) || `'"(,:<`.includes(c);
}

/**
 * Answers "where is the next occurrence of `needle` at or after i" for
 * non-decreasing i in amortised constant time, so a scan that asks at every
 * candidate position stays linear.
 */
export class NextIndex {
  private cached = -2;
  private cachedFrom = -1;
  constructor(
    private readonly data: string,
    private readonly needle: string,
  ) {}

  from(i: number): number {
    if (this.cached === -1 && i >= this.cachedFrom) return -1;
    if (this.cached >= i && i >= this.cachedFrom) return this.cached;
    this.cachedFrom = i;
    this.cached = this.data.indexOf(this.needle, i);
    return this.cached;
  }
}

/**
 * Memoises a per-string computation: patterns call `find` many times on the
 * same text, and an index built once makes each call cheap.
 */
export function perText<T>(build: (data: string) => T): (data: string) => T {
  let lastData: string | undefined;
  let lastValue: T | undefined;
  return (data) => {
    if (data !== lastData || lastValue === undefined) {
      lastData = data;
      lastValue = build(data);
    }
    return lastValue;
  };
}
