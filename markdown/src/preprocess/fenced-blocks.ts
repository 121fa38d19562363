// Fenced blocks (``` and ~~~) are resolved line by line before block parsing,
// with a stack of open blocks: code and math become stashed HTML, while quotes
// and spoilers become ordinary Markdown again (`> ` lines, spoiler wrappers)
// so that their contents are parsed like everything else. Unclosed blocks run
// to the end of the message.

import { formatCodeBlock } from '../highlight/code-block.js';
import { renderDisplayMath } from '../math.js';
import type { RenderState } from '../state.js';
import { parseFenceLine } from './fence-line.js';

// Deeper nesting than this is treated as text; it bounds the work and output.
const MAX_OPEN_BLOCKS = 32;

interface OpenBlock {
  handleLine(line: string): void;
  close(): void;
}

class FenceStack {
  readonly blocks: OpenBlock[] = [];
  constructor(readonly state: RenderState) {}

  /** Opens a block if `line` is a fence; otherwise adds the line to `output`. */
  routeLine(output: string[], line: string): void {
    const fence = this.blocks.length < MAX_OPEN_BLOCKS ? parseFenceLine(line) : undefined;
    if (!fence) {
      output.push(line);
      return;
    }
    const { lang, header } = fence;
    if (lang === 'quote' || lang === 'quoted') {
      this.blocks.push(new QuoteBlock(this, output, fence.fence));
    } else if (lang === 'math') {
      this.blocks.push(new MathBlock(this, output, fence.fence));
    } else if (lang === 'spoiler') {
      this.blocks.push(new SpoilerBlock(this, output, fence.fence, header ?? ''));
    } else {
      this.blocks.push(new CodeBlock(this, output, fence.fence, lang));
    }
  }

  pop(): void {
    this.blocks.pop();
  }
}

/** Emits a finished block surrounded by blank lines so it is a block of its own. */
function emitLines(output: string[], text: string): void {
  output.push('', ...text.split('\n'), '');
}

class CodeBlock implements OpenBlock {
  private readonly lines: string[] = [];
  constructor(
    private readonly stack: FenceStack,
    private readonly output: string[],
    private readonly fence: string,
    private readonly lang: string | undefined,
  ) {}

  handleLine(line: string): void {
    const trimmed = line.trimEnd();
    if (trimmed === this.fence) this.close();
    else this.lines.push(trimmed);
  }

  close(): void {
    const lang = this.lang ?? this.stack.state.ctx.defaultCodeBlockLanguage;
    const html = formatCodeBlock(this.lines.join('\n'), lang || undefined);
    emitLines(this.output, this.stack.state.stashHtml(html));
    this.stack.pop();
  }
}

class MathBlock implements OpenBlock {
  private readonly lines: string[] = [];
  constructor(
    private readonly stack: FenceStack,
    private readonly output: string[],
    private readonly fence: string,
  ) {}

  handleLine(line: string): void {
    if (line.trimEnd() === this.fence) this.close();
    else this.lines.push(line);
  }

  close(): void {
    // Each blank-line-separated paragraph is its own display formula.
    const html = this.lines
      .join('\n')
      .split('\n\n')
      .map((paragraph) => renderDisplayMath(paragraph))
      .join('\n\n');
    emitLines(this.output, this.stack.state.stashHtml(html));
    this.stack.pop();
  }
}

class QuoteBlock implements OpenBlock {
  private readonly lines: string[] = [];
  constructor(
    private readonly stack: FenceStack,
    private readonly output: string[],
    private readonly fence: string,
  ) {}

  handleLine(line: string): void {
    if (line.trimEnd() === this.fence) this.close();
    else this.stack.routeLine(this.lines, line);
  }

  close(): void {
    emitLines(this.output, this.lines.map((line) => `> ${line}`).join('\n'));
    this.stack.pop();
  }
}

class SpoilerBlock implements OpenBlock {
  private readonly lines: string[] = [];
  constructor(
    private readonly stack: FenceStack,
    private readonly output: string[],
    private readonly fence: string,
    private readonly title: string,
  ) {}

  handleLine(line: string): void {
    if (line.trimEnd() === this.fence) this.close();
    else this.stack.routeLine(this.lines, line);
  }

  close(): void {
    const state = this.stack.state;
    // The wrappers are stashed so that title and content stay Markdown.
    const text = [
      state.stashHtml('<div class="spoiler-block"><div class="spoiler-header">'),
      this.title,
      state.stashHtml('</div><div class="spoiler-content" aria-hidden="true">'),
      this.lines.join('\n'),
      state.stashHtml('</div></div>'),
    ].join('\n\n');
    emitLines(this.output, text);
    this.stack.pop();
  }
}

/** Resolves all fenced blocks in `lines`; returns the lines for the block parser. */
export function expandFencedBlocks(lines: readonly string[], state: RenderState): string[] {
  const output: string[] = [];
  const stack = new FenceStack(state);
  for (const line of lines) {
    const top = stack.blocks[stack.blocks.length - 1];
    if (top) top.handleLine(line);
    else stack.routeLine(output, line);
  }
  while (stack.blocks.length) (stack.blocks[stack.blocks.length - 1] as OpenBlock).close();
  // A block closed by the end of the message must still end with a blank line.
  if (output.length > 2 && output[output.length - 2] !== '') output.push('');
  return output;
}
