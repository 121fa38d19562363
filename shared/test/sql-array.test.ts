/** sqlArray's literals read back by PostgreSQL as the arrays they stand for (ids, nulls, flags, booleans). */
import t from 'tap';
import { createPool, sqlArray } from '../src/db/index.js';
import { testEnv } from '../src/testing/index.js';

t.test('sqlArray literals cast to typed arrays', async (t) => {
  const env = await testEnv(t);
  const pool = createPool(env.databaseUrl, { max: 1 });
  t.teardown(() => pool.end());
  const big = 2 ** 53 - 1;
  const { rows } = await pool.query<{ ids: string[]; ints: number[]; flags: boolean[]; empty: number[] }>(
    'SELECT $1::bigint[] AS ids, $2::int[] AS ints, $3::boolean[] AS flags, $4::int[] AS empty',
    [sqlArray([1, big, null, -7]), sqlArray([0, 128]), sqlArray([true, false, null]), sqlArray([])],
  );
  t.same(rows[0], { ids: ['1', String(big), null, '-7'], ints: [0, 128], flags: [true, false, null], empty: [] });
  t.throws(() => sqlArray([Number.NaN]), TypeError, 'a value PostgreSQL could not read is refused here');
});
