/**
 * The bounds of a request (deadline, caller's signal) live in an AsyncLocalStorage that is on
 * only while bounded work is in flight, so that Node's promise hooks do not run otherwise
 * (not observable here: tap keeps hooks of its own on). Overlapping requests keep their own.
 */
import t from 'tap';
import { currentSignal, detachedFromDeadline, withCallerSignal } from '../src/bus/index.js';

t.test('bounds of overlapping requests hold while others end, and later ones have theirs again', async (t) => {
  const [a, b] = [new AbortController(), new AbortController()];
  const seen: Array<AbortSignal | undefined> = [];
  let openA!: () => void;
  const gate = new Promise<void>((r) => (openA = r));
  const runA = withCallerSignal(a.signal, async () => {
    await gate;
    seen.push(currentSignal());
    await new Promise((r) => setTimeout(r, 5));
    seen.push(currentSignal());
  });
  await withCallerSignal(b.signal, async () => {
    await new Promise((r) => setTimeout(r, 5));
    seen.push(currentSignal());
  });
  openA();
  await runA;
  t.same(seen, [b.signal, a.signal, a.signal], 'each request saw its own signal, the first after the second ended');
  t.equal(currentSignal(), undefined, 'no signal outside a request');
  await withCallerSignal(b.signal, async () => {
    await null;
    t.equal(currentSignal(), b.signal, 'a later request has its bounds again');
  });
  t.equal(await detachedFromDeadline(async () => (await null, currentSignal())), undefined, 'detached work has none');
});
