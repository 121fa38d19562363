// Parsing of `<time:…>` values: ISO 8601, UNIX timestamps, and written dates
// such as "31 Dec 2017 5:30 am IST". Unlike a general date parser, a date
// (year, month and day) is required: filling the gaps from "today" would make
// rendering depend on when it happens.

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** Common zone abbreviations, in minutes east of UTC (IST is India's). */
const ZONES: Record<string, number> = {
  utc: 0, gmt: 0, z: 0, wet: 0, west: 60, bst: 60, cet: 60, cest: 120, eet: 120, eest: 180,
  msk: 180, ist: 330, pkt: 300, sgt: 480, hkt: 480, cst: -360, cdt: -300, est: -300, edt: -240,
  mst: -420, mdt: -360, pst: -480, pdt: -420, akst: -540, akdt: -480, hst: -600, jst: 540,
  kst: 540, awst: 480, acst: 570, acdt: 630, aest: 600, aedt: 660, nzst: 720, nzdt: 780,
};

const MS_PER_DAY = 86_400_000;
const MIN_MS = daysFromCivil(1, 1, 1) * MS_PER_DAY;
const MAX_MS = (daysFromCivil(9999, 12, 31) + 1) * MS_PER_DAY - 1;

/** Days since 1970-01-01 of a proleptic Gregorian date (valid for any year). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

function daysInMonth(year: number, month: number): number {
  return daysFromCivil(month === 12 ? year + 1 : year, month === 12 ? 1 : month + 1, 1) - daysFromCivil(year, month, 1);
}

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  micro: number;
  /** Minutes east of UTC; undefined means UTC. */
  offset: number | undefined;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** Epoch milliseconds of validated parts, or undefined when out of range. */
function toEpochMs(p: Parts): number | undefined {
  if (p.month < 1 || p.month > 12 || p.day < 1 || p.year < 1 || p.year > 9999) return undefined;
  if (p.day > daysInMonth(p.year, p.month) || p.hour > 23 || p.minute > 59 || p.second > 59) return undefined;
  const ms =
    daysFromCivil(p.year, p.month, p.day) * MS_PER_DAY +
    ((p.hour * 60 + p.minute - (p.offset ?? 0)) * 60 + p.second) * 1000;
  return ms < MIN_MS || ms > MAX_MS ? undefined : ms;
}

/** `2017-12-31T00:00:00Z` (microseconds only when present). */
function formatUtc(ms: number, micro: number): string {
  const days = Math.floor(ms / MS_PER_DAY);
  const [y, m, d] = civilFromDays(days);
  const secs = Math.floor((ms - days * MS_PER_DAY) / 1000);
  const time = `${pad(Math.floor(secs / 3600))}:${pad(Math.floor(secs / 60) % 60)}:${pad(secs % 60)}`;
  return `${pad(y, 4)}-${pad(m)}-${pad(d)}T${time}${micro ? `.${pad(micro, 6)}` : ''}Z`;
}

function parseOffset(text: string): number | undefined {
  const lower = text.toLowerCase();
  if (lower in ZONES) return ZONES[lower];
  const m = /^(?:utc|gmt)?([+-])(\d{1,2})(?::?(\d{2}))?$/i.exec(text);
  if (!m) return undefined;
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? 0);
  return m[1] === '-' ? -minutes : minutes;
}

const ISO = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6})\d*)?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

function parseIso(text: string): Parts | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const offset = m[8] ? parseOffset(m[8]) : undefined;
  return {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    micro: m[7] ? Number(m[7].padEnd(6, '0')) : 0,
    offset,
  };
}

/** Digit-only dates: YYYYMMDD, YYYYMMDDhhmm, YYYYMMDDhhmmss. */
function parseCompact(text: string): Parts | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?$/.exec(text);
  if (!m) return undefined;
  return {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4] ?? 0),
    minute: Number(m[5] ?? 0),
    second: Number(m[6] ?? 0),
    micro: 0,
    offset: undefined,
  };
}

/** Free-form dates: tokens for day, month name, year, time, am/pm and zone. */
function parseWritten(text: string): Parts | undefined {
  const tokens = text
    .replace(/,/g, ' ')
    .split(/\s+/)
    .filter((t) => t && t.toLowerCase() !== 'at' && t.toLowerCase() !== 'on');
  let year: number | undefined;
  let month: number | undefined;
  let day: number | undefined;
  let hour = 0;
  let minute = 0;
  let second = 0;
  let meridiem: 'am' | 'pm' | undefined;
  let offset: number | undefined;
  for (const token of tokens) {
    const lower = token.toLowerCase().replace(/\.$/, '');
    const monthIndex = MONTHS.findIndex((name) => lower.startsWith(name) && lower.length <= 9);
    const time = /^(\d{1,2})(?::(\d{2})(?::(\d{2}))?(am|pm)?|(am|pm))$/i.exec(token);
    const dayWithSuffix = /^(\d{1,2})(?:st|nd|rd|th)?$/i.exec(token);
    const slashDate = /^(\d{1,4})[/.-](\d{1,2})[/.-](\d{1,4})$/.exec(token);
    if (time) {
      hour = Number(time[1]);
      minute = Number(time[2] ?? 0);
      second = Number(time[3] ?? 0);
      const suffix = time[4] ?? time[5];
      if (suffix) meridiem = suffix.toLowerCase() as 'am' | 'pm';
    } else if (lower === 'am' || lower === 'pm') {
      meridiem = lower;
    } else if (monthIndex >= 0 && month === undefined) {
      month = monthIndex + 1;
    } else if (WEEKDAYS.some((name) => lower.startsWith(name))) {
      // Weekday names carry no information we need.
    } else if (slashDate) {
      const [a, b, c] = [Number(slashDate[1]), Number(slashDate[2]), Number(slashDate[3])];
      if ((slashDate[1] as string).length === 4) [year, month, day] = [a, b, c];
      else [month, day, year] = [a, b, c];
    } else if (/^\d{4}$/.test(token) && year === undefined) {
      year = Number(token);
    } else if (dayWithSuffix && day === undefined) {
      day = Number(dayWithSuffix[1]);
    } else if (parseOffset(token) !== undefined && offset === undefined) {
      offset = parseOffset(token);
    } else {
      return undefined;
    }
  }
  if (year === undefined || month === undefined || day === undefined) return undefined;
  if (meridiem) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (meridiem === 'pm' ? 12 : 0);
  }
  return { year, month, day, hour, minute, second, micro: 0, offset };
}

/**
 * Returns the ISO 8601 UTC form of a `<time:…>` value (`…Z`), or undefined
 * when it is not a time we can read or lies outside years 1–9999.
 */
export function parseTimeValue(input: string): string | undefined {
  const text = input.trim();
  if (!text || text.length > 100) return undefined;
  const parts = parseIso(text) ?? parseCompact(text) ?? parseWritten(text);
  if (parts) {
    const ms = toEpochMs(parts);
    return ms === undefined ? undefined : formatUtc(ms, parts.micro);
  }
  if (/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/.test(text)) {
    const seconds = Number(text);
    const ms = Math.floor(seconds) * 1000;
    if (!Number.isFinite(seconds) || ms < MIN_MS || ms > MAX_MS) return undefined;
    const micro = Math.round((seconds - Math.floor(seconds)) * 1e6);
    return formatUtc(ms, micro);
  }
  return undefined;
}
