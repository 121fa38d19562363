// Language names for code blocks. Zulip records the highlighter's canonical
// language name in `data-code-language` (so `js` and `javascript` both say
// "JavaScript"), and the user's own word when the language is unknown.
// Only some languages also get token highlighting here (see README).

import { type Token, tokenizePython } from './python.js';
import { tokenizeTex } from './tex.js';

export interface Language {
  name: string;
  tokenize?: (code: string) => Token[];
}

const python: Language = { name: 'Python', tokenize: (code) => tokenizePython(code, 3) };
const python2: Language = { name: 'Python 2.x', tokenize: (code) => tokenizePython(code, 2) };
const tex: Language = { name: 'TeX', tokenize: tokenizeTex };

// alias list → canonical name, as the Pygments lexers name themselves.
const NAMES: Array<[string, string[]]> = [
  ['Bash', ['bash', 'sh', 'ksh', 'zsh', 'shell', 'openrc']],
  ['Bash Session', ['console', 'shell-session']],
  ['Batchfile', ['batch', 'bat', 'dosbatch', 'winbatch']],
  ['C', ['c']],
  ['C#', ['csharp', 'c#', 'cs']],
  ['C++', ['cpp', 'c++']],
  ['Clojure', ['clojure', 'clj']],
  ['CMake', ['cmake']],
  ['CoffeeScript', ['coffeescript', 'coffee-script', 'coffee']],
  ['Common Lisp', ['common-lisp', 'cl', 'lisp']],
  ['CSS', ['css']],
  ['D', ['d']],
  ['Dart', ['dart']],
  ['Diff', ['diff', 'udiff']],
  ['Django/Jinja', ['django', 'jinja']],
  ['Docker', ['docker', 'dockerfile']],
  ['Elixir', ['elixir', 'ex', 'exs']],
  ['Elm', ['elm']],
  ['Erlang', ['erlang']],
  ['F#', ['fsharp', 'f#']],
  ['Fortran', ['fortran', 'f90']],
  ['Go', ['go', 'golang']],
  ['GraphQL', ['graphql']],
  ['Groovy', ['groovy']],
  ['Haskell', ['haskell', 'hs']],
  ['HTML', ['html']],
  ['INI', ['ini', 'cfg', 'dosini']],
  ['Java', ['java']],
  ['JavaScript', ['javascript', 'js']],
  ['JSON', ['json', 'json-object']],
  ['JSX', ['jsx', 'react']],
  ['Julia', ['julia', 'jl']],
  ['Kotlin', ['kotlin']],
  ['Lua', ['lua']],
  ['Makefile', ['make', 'makefile', 'mf', 'bsdmake']],
  ['Markdown', ['markdown', 'md']],
  ['Matlab', ['matlab']],
  ['Nginx configuration file', ['nginx']],
  ['Nix', ['nixos', 'nix']],
  ['Objective-C', ['objective-c', 'objectivec', 'obj-c', 'objc']],
  ['OCaml', ['ocaml']],
  ['Perl', ['perl', 'pl']],
  ['PHP', ['php', 'php3', 'php4', 'php5']],
  ['PostgreSQL SQL dialect', ['postgresql', 'postgres']],
  ['PowerShell', ['powershell', 'pwsh', 'posh', 'ps1', 'psm1']],
  ['Prolog', ['prolog']],
  ['Protocol Buffer', ['protobuf', 'proto']],
  ['Python console session', ['pycon', 'python-console']],
  ['Python Traceback', ['pytb', 'py3tb']],
  ['R', ['splus', 's', 'r']],
  ['Racket', ['racket', 'rkt']],
  ['reStructuredText', ['restructuredtext', 'rst', 'rest']],
  ['Ruby', ['ruby', 'rb', 'duby']],
  ['Rust', ['rust', 'rs']],
  ['Scala', ['scala']],
  ['Scheme', ['scheme', 'scm']],
  ['SCSS', ['scss']],
  ['SQL', ['sql']],
  ['Swift', ['swift']],
  ['Text only', ['text']],
  ['TOML', ['toml']],
  ['TypeScript', ['typescript', 'ts']],
  ['Vim Script', ['vim']],
  ['XML', ['xml']],
  ['YAML', ['yaml']],
];

const BY_ALIAS = new Map<string, Language>();
for (const [name, aliases] of NAMES) for (const alias of aliases) BY_ALIAS.set(alias, { name });
for (const alias of ['python', 'py', 'sage', 'python3', 'py3', 'bazel', 'starlark']) BY_ALIAS.set(alias, python);
for (const alias of ['python2', 'py2']) BY_ALIAS.set(alias, python2);
for (const alias of ['tex', 'latex']) BY_ALIAS.set(alias, tex);

/** Looks a language up by any of its aliases, case-insensitively. */
export function findLanguage(alias: string): Language | undefined {
  return BY_ALIAS.get(alias.toLowerCase());
}
