/**
 * Narrows (spec 2.8) as clients send them — `{operator, operand, negated?}` objects or
 * `[operator, operand]` pairs — checked and normalised into terms with canonical operator
 * names. Anything we do not implement is refused here with a 400: a narrow we silently
 * ignored would return a wider set of messages than the client asked for.
 */
import { badRequest } from '@zc/shared/errors';

export type Operator =
  | 'stream'
  | 'streams'
  | 'topic'
  | 'sender'
  | 'dm'
  | 'dm-including'
  | 'group-pm-with'
  | 'is'
  | 'has'
  | 'id'
  | 'near'
  | 'search';

export type Operand = string | number | number[];

export interface Term {
  operator: Operator;
  operand: Operand;
  negated: boolean;
}

/** Old and new names of the same operator (Zulip renamed streams to channels and PMs to DMs). */
const ALIASES: Record<string, Operator> = {
  stream: 'stream',
  channel: 'stream',
  streams: 'streams',
  channels: 'streams',
  topic: 'topic',
  subject: 'topic',
  sender: 'sender',
  from: 'sender',
  dm: 'dm',
  'pm-with': 'dm',
  'dm-including': 'dm-including',
  'group-pm-with': 'group-pm-with',
  is: 'is',
  has: 'has',
  id: 'id',
  near: 'near',
  search: 'search',
};

export const IS_OPERANDS = ['dm', 'private', 'starred', 'unread', 'mentioned', 'alerted', 'resolved'] as const;
export const HAS_OPERANDS = ['link', 'image', 'attachment'] as const;

export const badNarrow = (desc: string) => badRequest(`Invalid narrow operator: ${desc}`, { desc });

function checkOperand(operator: Operator, operand: unknown): Operand {
  if (typeof operand === 'string') {
    if (operator === 'search' && operand.length > NARROW_LIMITS.searchLength) throw badNarrow(`search terms longer than ${NARROW_LIMITS.searchLength} characters`);
    // A comma-separated list of people ('dm', 'sender'…) is capped like an array operand.
    if (operand.length > NARROW_LIMITS.searchLength) throw badNarrow(`operand of ${operator} longer than ${NARROW_LIMITS.searchLength} characters`);
    if (operator === 'is' && !(IS_OPERANDS as readonly string[]).includes(operand)) throw badNarrow(`unknown 'is' operand ${operand}`);
    if (operator === 'has' && !(HAS_OPERANDS as readonly string[]).includes(operand)) throw badNarrow(`unknown 'has' operand ${operand}`);
    if (operator === 'streams' && operand !== 'public') throw badNarrow(`unknown streams operand ${operand}`);
    if ((operator === 'id' || operator === 'near') && !/^\d+$/.test(operand.trim())) throw badNarrow('Invalid message ID');
    return operator === 'id' || operator === 'near' ? Number(operand) : operand;
  }
  if (typeof operand === 'number' && Number.isSafeInteger(operand)) {
    if (['stream', 'sender', 'dm', 'dm-including', 'group-pm-with', 'id', 'near'].includes(operator)) return operand;
  }
  if (Array.isArray(operand) && operand.length > NARROW_LIMITS.listOperand) throw badNarrow(`more than ${NARROW_LIMITS.listOperand} users for ${operator}`);
  if (Array.isArray(operand) && operand.every((x) => typeof x === 'number' && Number.isSafeInteger(x))) {
    if (operator === 'dm') return operand as number[];
  }
  throw badNarrow(`invalid operand for ${operator}`);
}

/**
 * Shape limits, so no narrow can make an exploding query: each term adds a condition (some
 * with an array of every public stream), each search word a tsquery branch. Real clients send
 * a handful of terms; identical terms are merged before the limits are counted.
 */
export const NARROW_LIMITS = { terms: 20, sameOperator: 10, searchLength: 1000, listOperand: 100, searchWords: 100 } as const;

/**
 * Words of a search text as PostgreSQL's parser would roughly split them (letters and digits;
 * it may add a lexeme for each part of a hyphenated word). Every word is one more branch of the
 * tsquery each candidate row is tested against: ten searches of 1000 characters made a
 * ~1500-branch query that PostgreSQL chose to test against every row of the table (seconds per
 * statement at 100,000 messages, past the request deadline), so the words are counted in all.
 */
const searchWords = (text: string) => text.split(/[^\p{L}\p{N}]+/u).filter(Boolean).length;

/** The narrow parameter decoded from JSON (or already an array) into checked terms. */
export function parseNarrow(raw: unknown): Term[] {
  if (raw === undefined || raw === null || raw === '') return [];
  if (!Array.isArray(raw)) throw badRequest('Invalid narrow', { var_name: 'narrow' });
  // Counted before anything is parsed: the parse itself must not be the unbounded work.
  if (raw.length > NARROW_LIMITS.terms * 5) throw badNarrow(`too many operators (at most ${NARROW_LIMITS.terms})`);
  return checkShape(raw.map(parseTerm));
}

/** Merges identical terms, then enforces NARROW_LIMITS. */
function checkShape(parsed: readonly Term[]): Term[] {
  const seen = new Set<string>();
  const terms = parsed.filter((t) => {
    const key = JSON.stringify([t.operator, t.operand, t.negated]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (terms.length > NARROW_LIMITS.terms) throw badNarrow(`too many operators (at most ${NARROW_LIMITS.terms})`);
  const perOperator = new Map<Operator, number>();
  for (const t of terms) {
    const n = (perOperator.get(t.operator) ?? 0) + 1;
    perOperator.set(t.operator, n);
    if (n > NARROW_LIMITS.sameOperator) throw badNarrow(`operator ${t.operator} used more than ${NARROW_LIMITS.sameOperator} times`);
  }
  const words = terms.reduce((n, t) => n + (t.operator === 'search' ? searchWords(String(t.operand)) : 0), 0);
  if (words > NARROW_LIMITS.searchWords) throw badNarrow(`more than ${NARROW_LIMITS.searchWords} search words`);
  return terms;
}

function parseTerm(el: unknown): Term {
  let operator: unknown;
  let operand: unknown;
  let negated = false;
  if (Array.isArray(el)) {
    if (el.length !== 2) throw badRequest('Invalid narrow', { var_name: 'narrow' });
    [operator, operand] = el;
  } else if (el && typeof el === 'object') {
    const o = el as { operator?: unknown; operand?: unknown; negated?: unknown };
    operator = o.operator;
    operand = o.operand;
    if (o.negated !== undefined && typeof o.negated !== 'boolean') throw badRequest('Invalid narrow', { var_name: 'narrow' });
    negated = o.negated === true;
  } else {
    throw badRequest('Invalid narrow', { var_name: 'narrow' });
  }
  if (typeof operator !== 'string') throw badRequest('Invalid narrow', { var_name: 'narrow' });
  // The web app's search box sends negation as a leading '-'.
  if (operator.startsWith('-')) {
    negated = !negated;
    operator = operator.slice(1);
  }
  const canonical = ALIASES[(operator as string).toLowerCase()];
  if (!canonical) throw badNarrow(`unknown operator ${operator as string}`);
  return { operator: canonical, operand: checkOperand(canonical, operand), negated };
}

/** The keyword-search terms of a narrow (they ask for match_content/match_subject). */
export function searchTerms(terms: readonly Term[]): string[] {
  return terms.filter((t) => t.operator === 'search' && !t.negated).map((t) => String(t.operand));
}
