// TeX/LaTeX token highlighting with the token classes Zulip's stylesheet knows
// (k = command, nb = braces and specials, c = comment, s/sb = math delimiters).

import type { Token } from './python.js';

type Mode = 'text' | 'inline' | 'display';

const isLetter = (c: string | undefined): boolean => c !== undefined && /[a-zA-Z]/.test(c);

export function tokenizeTex(code: string): Token[] {
  const tokens: Token[] = [];
  let mode: Mode = 'text';
  let i = 0;
  const n = code.length;
  const emit = (cls: string, value: string): void => {
    tokens.push([cls, value]);
  };
  while (i < n) {
    const c = code[i] as string;
    // Shared by every mode: comments to end of line, braces and specials.
    if (c === '%') {
      const newline = code.indexOf('\n', i);
      const end = newline < 0 ? n : newline + 1;
      emit('c', code.slice(i, end));
      i = end;
      continue;
    }
    if (c === '{' || c === '}' || c === '&' || c === '_' || c === '^') {
      emit('nb', c);
      i++;
      continue;
    }
    if (mode === 'text') {
      if (c === '\\' && (code[i + 1] === '[' || code[i + 1] === '(')) {
        emit(code[i + 1] === '[' ? 'sb' : 's', code.slice(i, i + 2));
        mode = code[i + 1] === '[' ? 'display' : 'inline';
        i += 2;
      } else if (c === '$') {
        const display = code[i + 1] === '$';
        emit(display ? 'sb' : 's', display ? '$$' : '$');
        mode = display ? 'display' : 'inline';
        i += display ? 2 : 1;
      } else if (c === '\\') {
        let j = i + 1;
        while (j < n && /[a-zA-Z@_:]/.test(code[j] as string)) j++;
        if (j === i + 1 && j < n && !/\s/.test(code[j] as string)) j++;
        emit('k', code.slice(i, j));
        i = j;
        // A command may be followed by an optional [argument] and a star.
        if (code[i] === '[') {
          const close = code.indexOf(']', i);
          const newline = code.indexOf('\n', i);
          if (close >= 0 && (newline < 0 || close < newline)) {
            emit('na', code.slice(i, close + 1));
            i = close + 1;
          }
        } else if (code[i] === '*') {
          emit('k', '*');
          i++;
        }
      } else {
        let j = i;
        while (j < n && !'\\$%&_^{}'.includes(code[j] as string)) j++;
        emit('', code.slice(i, j));
        i = j;
      }
      continue;
    }
    // Math modes.
    if (mode === 'inline' && ((c === '\\' && code[i + 1] === ')') || c === '$')) {
      const len = c === '$' ? 1 : 2;
      emit('s', code.slice(i, i + len));
      i += len;
      mode = 'text';
    } else if (mode === 'display' && ((c === '\\' && code[i + 1] === ']') || (c === '$' && code[i + 1] === '$'))) {
      emit('sb', code.slice(i, i + 2));
      i += 2;
      mode = 'text';
    } else if (mode === 'display' && c === '$') {
      emit('nb', '$');
      i++;
    } else if (c === '\\') {
      let j = i + 1;
      while (isLetter(code[j])) j++;
      if (j === i + 1 && j < n && !/\s/.test(code[j] as string)) j++;
      emit('nv', code.slice(i, j));
      i = j;
    } else if (/[0-9]/.test(c)) {
      let j = i;
      while (j < n && /[0-9]/.test(code[j] as string)) j++;
      emit('m', code.slice(i, j));
      i = j;
    } else if ('-=!+*/()[]'.includes(c)) {
      emit('o', c);
      i++;
    } else {
      let j = i;
      while (j < n && !'=!+*/()[]\\$%&_^{}0123456789-'.includes(code[j] as string)) j++;
      emit('nb', code.slice(i, j));
      i = j;
    }
  }
  return tokens;
}
