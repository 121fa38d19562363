// KaTeX 0.16.11 ships no type declarations; this covers the one call we make.
declare module 'katex' {
  interface KatexOptions {
    displayMode?: boolean;
    throwOnError?: boolean;
    trust?: boolean;
    strict?: boolean | 'ignore' | 'warn' | 'error';
    maxExpand?: number;
    maxSize?: number;
  }
  const katex: {
    renderToString(tex: string, options?: KatexOptions): string;
    version: string;
  };
  export default katex;
}
