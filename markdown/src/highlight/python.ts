// Python token highlighting, emitting the short token classes of Zulip's code
// stylesheet (k keyword, nf function name, bp self, s2 "string", …). It covers
// the common constructs, not every corner of the grammar; anything it does not
// recognise is still emitted, escaped, as a plain name or error-free text.

/** A token: its CSS class ('' for plain text) and its source text. */
export type Token = [cls: string, value: string];

const KEYWORDS = new Set([
  'assert', 'async', 'await', 'break', 'continue', 'del', 'elif', 'else', 'except', 'finally',
  'for', 'global', 'if', 'lambda', 'pass', 'raise', 'nonlocal', 'return', 'try', 'while',
  'yield', 'as', 'with', 'match', 'case',
]);
const CONSTANTS = new Set(['True', 'False', 'None']);
const OPERATOR_WORDS = new Set(['in', 'is', 'and', 'or', 'not']);
const PSEUDO = new Set(['self', 'cls', 'Ellipsis', 'NotImplemented']);
const BUILTINS = new Set([
  '__import__', 'abs', 'aiter', 'all', 'any', 'bin', 'bool', 'bytearray', 'breakpoint', 'bytes',
  'callable', 'chr', 'classmethod', 'compile', 'complex', 'delattr', 'dict', 'dir', 'divmod',
  'enumerate', 'eval', 'filter', 'float', 'format', 'frozenset', 'getattr', 'globals', 'hasattr',
  'hash', 'hex', 'id', 'input', 'int', 'isinstance', 'issubclass', 'iter', 'len', 'list',
  'locals', 'map', 'max', 'memoryview', 'min', 'next', 'object', 'oct', 'open', 'ord', 'pow',
  'print', 'property', 'range', 'repr', 'reversed', 'round', 'set', 'setattr', 'slice',
  'sorted', 'staticmethod', 'str', 'sum', 'super', 'tuple', 'type', 'vars', 'zip',
]);
const EXCEPTION_NAME = /^(?:[A-Z][a-zA-Z]*(?:Error|Exception|Warning)|KeyboardInterrupt|StopIteration|SystemExit|GeneratorExit)$/;
const OPERATOR_CHARS = '-~+/*%=<>&^|.@!';
const PUNCTUATION_CHARS = '[]{}:(),;';

const isIdentStart = (c: string | undefined): boolean => c !== undefined && /[\p{L}_]/u.test(c);
const isIdentChar = (c: string | undefined): boolean => c !== undefined && /[\p{L}\p{N}_]/u.test(c);

function readIdentifier(code: string, i: number): number {
  let j = i;
  while (j < code.length && isIdentChar(code[j])) j++;
  return j;
}

function stringClass(quote: string, triple: boolean, atLineStart: boolean): string {
  if (triple && atLineStart) return 'sd';
  return quote === '"' ? 's2' : 's1';
}

/** Reads a string literal starting at its opening quote; returns its end and the tokens inside. */
function readString(code: string, i: number, raw: boolean, cls: string): { end: number; tokens: Token[] } {
  const quote = code[i] as string;
  const triple = code.startsWith(quote.repeat(3), i);
  const delimiter = triple ? quote.repeat(3) : quote;
  const tokens: Token[] = [];
  let j = i + delimiter.length;
  let chunkStart = i;
  while (j < code.length) {
    if (code.startsWith(delimiter, j)) {
      j += delimiter.length;
      tokens.push([cls, code.slice(chunkStart, j)]);
      return { end: j, tokens };
    }
    const c = code[j];
    if (c === '\n' && !triple) break;
    if (c === '\\' && j + 1 < code.length) {
      if (!raw) {
        if (j > chunkStart) tokens.push([cls, code.slice(chunkStart, j)]);
        tokens.push(['se', code.slice(j, j + 2)]);
        chunkStart = j + 2;
      }
      j += 2;
      continue;
    }
    j++;
  }
  if (j > chunkStart) tokens.push([cls, code.slice(chunkStart, j)]);
  return { end: j, tokens };
}

function readNumber(code: string, i: number): { end: number; cls: string } {
  const rest = code.slice(i, i + 64);
  const hex = /^0[xX][0-9a-fA-F_]+/.exec(rest);
  if (hex) return { end: i + hex[0].length, cls: 'mh' };
  const oct = /^0[oO][0-7_]+/.exec(rest);
  if (oct) return { end: i + oct[0].length, cls: 'mo' };
  const bin = /^0[bB][01_]+/.exec(rest);
  if (bin) return { end: i + bin[0].length, cls: 'mb' };
  const float = /^(?:\d[\d_]*\.\d[\d_]*|\d[\d_]*\.|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?j?|^\d[\d_]*[eE][+-]?\d[\d_]*j?/.exec(rest);
  if (float) return { end: i + float[0].length, cls: 'mf' };
  const int = /^\d[\d_]*[jJlL]?/.exec(rest) as RegExpExecArray;
  return { end: i + int[0].length, cls: 'mi' };
}

export function tokenizePython(code: string, version: 2 | 3): Token[] {
  const tokens: Token[] = [];
  const n = code.length;
  let i = 0;
  let lineStart = true;
  // After `def`/`class`/`import`/`from`, the next name has its own class.
  let pendingName: 'nf' | 'nc' | 'nn' | undefined;
  while (i < n) {
    const c = code[i] as string;
    if (c === '\n') {
      tokens.push(['w', '\n']);
      i++;
      lineStart = true;
      pendingName = pendingName === 'nn' ? undefined : pendingName;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\f' || c === '\v' || c === '\r') {
      let j = i;
      while (j < n && ' \t\f\v\r'.includes(code[j] as string)) j++;
      tokens.push([pendingName === 'nf' || pendingName === 'nc' ? 'w' : '', code.slice(i, j)]);
      i = j;
      continue;
    }
    const atLineStart = lineStart;
    lineStart = false;
    if (c === '#') {
      let j = code.indexOf('\n', i);
      if (j < 0) j = n;
      tokens.push([i === 0 && code[1] === '!' ? 'ch' : 'c1', code.slice(i, j)]);
      i = j;
      continue;
    }
    if (c === '\\' && code[i + 1] === '\n') {
      tokens.push(['', '\\\n']);
      i += 2;
      continue;
    }
    // String prefixes (r, b, u, f and pairs) directly before a quote.
    const prefix = /^[rRbBuUfF]{1,2}(?=["'])/.exec(code.slice(i, i + 3));
    if (c === '"' || c === "'" || prefix) {
      const affixLength = prefix ? prefix[0].length : 0;
      if (affixLength) tokens.push(['sa', code.slice(i, i + affixLength)]);
      const raw = prefix ? /[rR]/.test(prefix[0]) : false;
      const start = i + affixLength;
      const quote = code[start] as string;
      const triple = code.startsWith(quote.repeat(3), start);
      const read = readString(code, start, raw, stringClass(quote, triple, atLineStart && !prefix));
      tokens.push(...read.tokens);
      i = read.end;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(code[i + 1] ?? ''))) {
      const num = readNumber(code, i);
      tokens.push([num.cls, code.slice(i, num.end)]);
      i = num.end;
      continue;
    }
    if (c === '@' && isIdentStart(code[i + 1]) && atLineStart) {
      let j = readIdentifier(code, i + 1);
      while (code[j] === '.' && isIdentStart(code[j + 1])) j = readIdentifier(code, j + 1);
      tokens.push(['nd', code.slice(i, j)]);
      i = j;
      continue;
    }
    if (isIdentStart(c)) {
      const j = readIdentifier(code, i);
      const word = code.slice(i, j);
      i = j;
      if (pendingName === 'nf' || pendingName === 'nc') {
        tokens.push([word.startsWith('__') && word.endsWith('__') && pendingName === 'nf' ? 'fm' : pendingName, word]);
        pendingName = undefined;
        continue;
      }
      if (pendingName === 'nn') {
        if (word === 'import' || word === 'as') {
          tokens.push(['kn', word]);
          if (word === 'as') pendingName = undefined;
        } else {
          tokens.push(['nn', word]);
        }
        continue;
      }
      if (word === 'def' || word === 'class') {
        tokens.push(['k', word]);
        pendingName = word === 'def' ? 'nf' : 'nc';
      } else if (word === 'import' || word === 'from') {
        tokens.push(['kn', word]);
        pendingName = 'nn';
      } else if (version === 2 && (word === 'print' || word === 'exec')) {
        tokens.push(['k', word]);
      } else if (KEYWORDS.has(word)) {
        tokens.push(['k', word]);
      } else if (CONSTANTS.has(word)) {
        tokens.push(['kc', word]);
      } else if (OPERATOR_WORDS.has(word)) {
        tokens.push(['ow', word]);
      } else if (PSEUDO.has(word)) {
        tokens.push(['bp', word]);
      } else if (BUILTINS.has(word) && code[i - word.length - 1] !== '.') {
        tokens.push(['nb', word]);
      } else if (EXCEPTION_NAME.test(word)) {
        tokens.push(['ne', word]);
      } else if (word.startsWith('__') && word.endsWith('__') && word.length > 4) {
        tokens.push([code[i] === '(' ? 'fm' : 'vm', word]);
      } else {
        tokens.push(['n', word]);
      }
      continue;
    }
    if (pendingName === 'nn' && c === '.') {
      tokens.push(['nn', c]);
      i++;
      continue;
    }
    pendingName = pendingName === 'nn' && c === ',' ? 'nn' : undefined;
    if (OPERATOR_CHARS.includes(c)) {
      tokens.push(['o', c]);
      i++;
      continue;
    }
    if (PUNCTUATION_CHARS.includes(c)) {
      tokens.push(['p', c]);
      i++;
      continue;
    }
    tokens.push(['err', c]);
    i++;
  }
  return tokens;
}
