/**
 * JSON text relayed without being parsed. /register's state of a large realm is megabytes of
 * JSON that the events service and the gateway only pass on, adding a few keys: parsing it into
 * objects and serialising it again at every hop cost more than building it. A handler returns
 * `RawJson` (`bus.serve` sends the text as the reply) and a caller asks for the reply's text
 * with `bus.requestRaw`.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * An object's members put together from JSON texts of whole objects (`{...}`) and plain values,
 * without parsing the texts: the caller makes sure no key is given twice.
 */
export function spliceObjects(parts: ReadonlyArray<RawJson | Record<string, unknown>>): RawJson {
  const inner: string[] = [];
  for (const p of parts) {
    const text = p instanceof RawJson ? p.text : JSON.stringify(p);
    const body = text.trim().slice(1, -1).trim();
    if (body) inner.push(body);
  }
  return new RawJson(`{${inner.join(',')}}`);
}
