// The block parser: the message is cut into blocks at blank lines, and each
// block is offered to the processors in order until one takes it. Processors
// may push text back onto the queue or recurse into a child element.

import type { RenderState } from '../state.js';
import type { El } from '../tree.js';

/** Nesting (quotes in lists in quotes…) deeper than this is rendered as plain text. */
export const MAX_BLOCK_DEPTH = 24;

/** A queue of blocks, cheap to take from and push back onto the front. */
export class BlockQueue {
  // Stored reversed so that both ends we use are the array's end.
  private readonly items: string[];
  constructor(blocks: readonly string[]) {
    this.items = [...blocks].reverse();
  }
  get length(): number {
    return this.items.length;
  }
  peek(): string {
    return this.items[this.items.length - 1] as string;
  }
  shift(): string {
    return this.items.pop() as string;
  }
  unshift(block: string): void {
    this.items.push(block);
  }
}

export interface BlockProcessor {
  readonly name: string;
  test(parser: BlockParser, parent: El, block: string): boolean;
  /** Returns false when it declines after all; the next processor is then tried. */
  run(parser: BlockParser, parent: El, blocks: BlockQueue): boolean | undefined;
}

export class BlockParser {
  private readonly stateStack: string[] = [];
  depth = 0;

  constructor(
    private readonly processors: readonly BlockProcessor[],
    readonly render: RenderState,
  ) {}

  /** Whether another level of nested structure is still allowed. */
  canNest(): boolean {
    return this.depth < MAX_BLOCK_DEPTH;
  }

  setState(state: string): void {
    this.stateStack.push(state);
  }

  resetState(): void {
    this.stateStack.pop();
  }

  isState(state: string): boolean {
    return this.stateStack[this.stateStack.length - 1] === state;
  }

  parseChunk(parent: El, text: string): void {
    this.parseBlocks(parent, text.split('\n\n'));
  }

  parseBlocks(parent: El, blocks: readonly string[]): void {
    this.depth++;
    try {
      const queue = new BlockQueue(blocks);
      while (queue.length) {
        const block = queue.peek();
        for (const processor of this.processors) {
          if (processor.test(this, parent, block) && processor.run(this, parent, queue) !== false) break;
        }
      }
    } finally {
      this.depth--;
    }
  }
}
