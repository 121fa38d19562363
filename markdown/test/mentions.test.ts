// Mentions and what the renderer reports about them, plus the other facts
// collected while rendering (/me, links, images, attachments, alert words).

import t from 'tap';
import { render } from '../src/index.js';
import { fixtureContext } from './fixture-context.js';

const run = (input: string) => render(input, fixtureContext({ alertWords: ['Lunch', 'ship it'] }));

t.test('a user mention by name notifies that user', async (t) => {
  const r = run('hi @**King Hamlet**');
  t.equal(r.html, '<p>hi <span class="user-mention" data-user-id="8">@King Hamlet</span></p>');
  t.same(r.mentioned_user_ids, [8]);
});

t.test('names are matched case-insensitively and shown as stored', async (t) => {
  t.equal(run('@**king hamlet**').html, '<p><span class="user-mention" data-user-id="8">@King Hamlet</span></p>');
});

t.test('the Name|id and |id forms pick the user by id', async (t) => {
  const r = run('@**Othello, the Moor of Venice|9** and @**|10**');
  t.same(r.mentioned_user_ids, [9, 10]);
  t.match(r.html, /data-user-id="9">@Othello, the Moor of Venice</);
  t.match(r.html, /data-user-id="10">@Iago</);
});

t.test('a name that does not match the id is no mention', async (t) => {
  const r = run('@**Zoe|8**');
  t.same(r.mentioned_user_ids, []);
  t.notMatch(r.html, /user-mention/);
});

t.test('unknown names stay text', async (t) => {
  const r = run('@**Nobody Here**');
  t.same(r.mentioned_user_ids, []);
  t.equal(r.html, '<p>@<strong>Nobody Here</strong></p>');
});

t.test('silent mentions render without @ and notify no one', async (t) => {
  const r = run('@_**Iago**');
  t.equal(r.html, '<p><span class="user-mention silent" data-user-id="10">Iago</span></p>');
  t.same(r.mentioned_user_ids, []);
});

t.test('mentioning a deactivated user is silent', async (t) => {
  const r = run('@**Old Ex User**');
  t.equal(r.html, '<p><span class="user-mention silent" data-user-id="12">Old Ex User</span></p>');
  t.same(r.mentioned_user_ids, []);
});

t.test('mentions inside quotes are silenced', async (t) => {
  const r = run('> @**King Hamlet** said @*support* was great');
  t.same(r.mentioned_user_ids, []);
  t.same(r.mentioned_group_ids, []);
  t.match(r.html, /user-mention silent/);
  t.match(r.html, /user-group-mention silent/);
});

t.test('a mention must follow whitespace or an opening character', async (t) => {
  t.same(run('foo@**King Hamlet**').mentioned_user_ids, []);
  t.same(run('(@**King Hamlet**)').mentioned_user_ids, [8]);
});

t.test('channel wildcards: all, everyone, stream, channel', async (t) => {
  for (const name of ['all', 'everyone', 'stream', 'channel']) {
    const r = run(`@**${name}**`);
    t.equal(r.html, `<p><span class="user-mention channel-wildcard-mention" data-user-id="*">@${name}</span></p>`);
    t.equal(r.wildcard_mention, 'stream');
    t.ok(r.mentions_stream_wildcard);
  }
});

t.test('the topic wildcard', async (t) => {
  const r = run('@**topic**');
  t.equal(r.html, '<p><span class="topic-mention">@topic</span></p>');
  t.equal(r.wildcard_mention, 'topic');
  t.ok(r.mentions_topic_wildcard);
});

t.test('silent wildcards set no flag', async (t) => {
  const r = run('@_**all** @_**topic**');
  t.equal(r.wildcard_mention, null);
  t.match(r.html, /channel-wildcard-mention silent/);
  t.match(r.html, /topic-mention silent/);
});

t.test('group mentions, loud and silent', async (t) => {
  const r = run('@*hamletcharacters* and @_*support* and @*nogroup*');
  t.same(r.mentioned_group_ids, [20]);
  t.match(r.html, /<span class="user-group-mention" data-user-group-id="20">@hamletcharacters<\/span>/);
  t.match(r.html, /<span class="user-group-mention silent" data-user-group-id="21">support<\/span>/);
  t.match(r.html, /@<em>nogroup<\/em>/);
});

t.test('mentions inside code are not mentions', async (t) => {
  t.same(run('`@**King Hamlet**`').mentioned_user_ids, []);
});

t.test('/me messages', async (t) => {
  t.equal(run('/me is away').is_me_message, true);
  t.equal(run('/me is away').html, '<p>/me is away</p>');
  t.equal(run('/meh').is_me_message, false);
  t.equal(run('hi /me there').is_me_message, false);
});

t.test('links, images and attachments are reported', async (t) => {
  const r = run('see https://example.com and [file](/user_uploads/2/ab/report.pdf) http://x.org/cat.png');
  t.ok(r.has_link);
  t.ok(r.has_image);
  t.ok(r.has_attachment);
  t.same(r.attachment_path_ids, ['2/ab/report.pdf']);
  t.same(r.links, ['https://example.com', '/user_uploads/2/ab/report.pdf', 'http://x.org/cat.png']);
  const plain = run('no links');
  t.notOk(plain.has_link);
  t.notOk(plain.has_image);
});

t.test('links to the realm are relative, including uploads', async (t) => {
  const r = run('[f](http://zulip.testserver/user_uploads/2/ab/x.txt)');
  t.equal(r.html, '<p><a href="user_uploads/2/ab/x.txt">f</a></p>');
  t.same(r.attachment_path_ids, ['2/ab/x.txt']);
});

t.test('alert words are found as whole words, case-insensitively', async (t) => {
  t.same(run('Who wants LUNCH?').alert_words_found, ['lunch']);
  t.same(run('lunchtime').alert_words_found, []);
  t.same(run('ok, ship it!').alert_words_found, ['ship it']);
});

t.test('channel and topic links', async (t) => {
  t.equal(
    run('#**Denmark>some topic**').html,
    '<p><a class="stream-topic" data-stream-id="1" href="/#narrow/channel/1-Denmark/topic/some.20topic">#Denmark &gt; some topic</a></p>',
  );
  t.equal(run('#**denmark**').html, '<p><a class="stream" data-stream-id="1" href="/#narrow/channel/1-Denmark">#Denmark</a></p>');
  t.equal(
    run('#**social>party@103**').html,
    '<p><a class="message-link" href="/#narrow/channel/13-social/topic/party/near/103">#social &gt; party @ 💬</a></p>',
  );
  t.equal(run('#**Atlantis**').html, '<p>#<strong>Atlantis</strong></p>');
});
