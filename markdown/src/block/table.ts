// Pipe tables: a header row, a separator row (`---|:--:`), then body rows.
// Every row gets exactly as many cells as the separator has columns.

import { El } from '../tree.js';
import type { BlockProcessor } from './parser.js';

type Align = 'left' | 'right' | 'center' | undefined;

interface Borders {
  left: boolean;
  right: boolean;
}

function endsWithUnescapedPipe(row: string): boolean {
  if (!row.endsWith('|')) return false;
  let backslashes = 0;
  for (let i = row.length - 2; i >= 0 && row[i] === '\\'; i--) backslashes++;
  return backslashes % 2 === 0;
}

/** Splits on pipes that are neither escaped nor inside a code span. */
function splitCells(row: string): string[] {
  const cells: string[] = [];
  let cellStart = 0;
  let i = 0;
  while (i < row.length) {
    const c = row[i];
    if (c === '\\') {
      i += 2;
    } else if (c === '`') {
      let run = 0;
      while (row[i + run] === '`') run++;
      const fence = '`'.repeat(run);
      let close = row.indexOf(fence, i + run);
      // Only a run of exactly the same length closes the span.
      while (close >= 0 && row[close + run] === '`') {
        let j = close;
        while (row[j] === '`') j++;
        close = row.indexOf(fence, j);
      }
      i = close >= 0 ? close + run : i + run;
    } else if (c === '|') {
      cells.push(row.slice(cellStart, i));
      cellStart = ++i;
    } else {
      i++;
    }
  }
  cells.push(row.slice(cellStart));
  return cells;
}

function splitRow(row: string, borders: Borders): string[] {
  let inner = row;
  if (borders.left && inner.startsWith('|')) inner = inner.slice(1);
  if (borders.right && endsWithUnescapedPipe(inner)) inner = inner.slice(0, -1);
  return splitCells(inner);
}

function stripSpaces(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && s[a] === ' ') a++;
  while (b > a && s[b - 1] === ' ') b--;
  return s.slice(a, b);
}

interface TableShape {
  borders: Borders;
  separator: string[];
}

function tableShape(block: string): TableShape | undefined {
  const rows = block.split('\n').map(stripSpaces);
  if (rows.length < 2) return undefined;
  const header = rows[0] as string;
  const borders = { left: header.startsWith('|'), right: endsWithUnescapedPipe(header) };
  const columns = splitRow(header, borders).length;
  let isTable = columns > 1;
  if (!isTable && columns === 1 && (borders.left || borders.right)) {
    // A one-column table needs a pipe on every row.
    isTable = rows.slice(1).every((row) => row.startsWith('|') || endsWithUnescapedPipe(row));
  }
  if (!isTable) return undefined;
  const separator = splitRow(rows[1] as string, borders);
  if (separator.length !== columns || !/^[|:\- ]*$/.test(separator.join(''))) return undefined;
  return { borders, separator };
}

function alignment(cell: string): Align {
  const c = stripSpaces(cell);
  if (c.startsWith(':') && c.endsWith(':')) return 'center';
  if (c.startsWith(':')) return 'left';
  if (c.endsWith(':')) return 'right';
  return undefined;
}

function buildRow(parent: El, row: string, aligns: readonly Align[], borders: Borders): void {
  const tr = parent.append(new El('tr'));
  const tag = parent.tag === 'thead' ? 'th' : 'td';
  const cells = splitRow(row, borders);
  aligns.forEach((align, i) => {
    const cell = tr.append(new El(tag));
    cell.text = stripSpaces(cells[i] ?? '').trim();
    if (align) cell.set('style', `text-align: ${align};`);
  });
}

export const table: BlockProcessor = {
  name: 'table',
  test: (_parser, _parent, block) => block.includes('|') && tableShape(block) !== undefined,
  run(_parser, parent, blocks) {
    const block = blocks.shift();
    const { borders, separator } = tableShape(block) as TableShape;
    const lines = block.split('\n');
    const aligns = separator.map(alignment);
    const tableEl = parent.append(new El('table'));
    buildRow(tableEl.append(new El('thead')), stripSpaces(lines[0] as string), aligns, borders);
    const tbody = tableEl.append(new El('tbody'));
    const rows = lines.slice(2);
    if (rows.length === 0) {
      const tr = tbody.append(new El('tr'));
      for (const align of [...aligns].reverse()) {
        const td = tr.append(new El('td'));
        if (align) td.set('style', `text-align: ${align};`);
      }
    } else {
      for (const row of rows) buildRow(tbody, stripSpaces(row), aligns, borders);
    }
    return true;
  },
};
