import t from 'tap';
import { isAppError } from '@zc/shared/errors';
import { checkWidgetData, originalContent, widgetOf, widgetSubmessage } from '../../src/lib/widget.js';

function errorOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (isAppError(e)) return e.message;
    throw e;
  }
  return undefined;
}

t.test('the widget a message content asks for (Zulip 6.2 get_widget_data)', async (t) => {
  const cases: Array<[string, ReturnType<typeof widgetOf>]> = [
    ['/poll Who is there?\n- Bernardo\n* Francisco\nHoratio\n', { widget_type: 'poll', extra_data: { question: 'Who is there?', options: ['Bernardo', 'Francisco', 'Horatio'] } }],
    ['/poll\nyes\n\n  no  ', { widget_type: 'poll', extra_data: { question: '', options: ['yes', 'no'] } }],
    ['/poll', { widget_type: 'poll', extra_data: { question: '', options: [] } }],
    ['/poll   Spaced out  ', { widget_type: 'poll', extra_data: { question: 'Spaced out', options: [] } }],
    ['/todo\nbuy bread', { widget_type: 'todo', extra_data: null }],
    ['/pollster what', null],
    [' /poll leading space', null],
    ['a /poll in the middle', null],
    ['/me waves', null],
    ['', null],
  ];
  for (const [content, want] of cases) t.same(widgetOf(content), want, JSON.stringify(content));
});

t.test("a widget is made from the message's original content, whatever edits followed", async (t) => {
  const edited = { id: 40, sender_id: 6, content: 'never mind', edit_history: [{ timestamp: 3, user_id: 6, prev_content: 'second' }, { timestamp: 2, user_id: 6, prev_topic: 'a', topic: 'b' }, { timestamp: 1, user_id: 6, prev_content: '/poll First?\nA' }] };
  t.equal(originalContent(edited), '/poll First?\nA');
  t.same(widgetSubmessage(edited), {
    id: 40,
    message_id: 40,
    sender_id: 6,
    msg_type: 'widget',
    content: JSON.stringify({ widget_type: 'poll', extra_data: { question: 'First?', options: ['A'] } }),
  });
  t.equal(widgetSubmessage({ id: 41, sender_id: 6, content: '/poll Now?', edit_history: [{ timestamp: 1, user_id: 6, prev_content: 'was plain' }] }), null, 'editing a plain message into a command makes no widget');
  t.equal(originalContent({ content: 'as sent', edit_history: null }), 'as sent');
});

t.test('submessage data is checked against the widget (validate_poll_data, validate_todo_data)', async (t) => {
  const cases: Array<[Parameters<typeof checkWidgetData>[0], unknown, boolean, string | undefined]> = [
    ['poll', { type: 'vote', key: 'canned,0', vote: 1 }, false, undefined],
    ['poll', { type: 'vote', key: 'canned,0', vote: -1 }, true, undefined],
    ['poll', { type: 'new_option', idx: 1, option: 'Marcellus' }, false, undefined],
    ['poll', { type: 'question', question: 'Who goes there?' }, true, undefined],
    ['poll', { type: 'question', question: 'Who goes there?' }, false, "You can't edit a question unless you are the author."],
    ['poll', { type: 'vote', key: 'canned,0', vote: '1' }, false, 'poll data["vote"] is not an integer'],
    ['poll', { type: 'vote', vote: 1 }, false, 'key key is missing from poll data'],
    ['poll', { type: 'vote', key: 'canned,0', vote: 1, extra: true }, false, 'Unexpected arguments: extra'],
    ['poll', { type: 'tally' }, false, 'Unknown type for poll data: tally'],
    ['poll', [1, 2], false, 'poll data is not a dict'],
    ['poll', { vote: 1 }, false, 'type key is missing from poll data'],
    ['poll', { type: 7 }, false, 'poll data["type"] is not a string'],
    ['todo', { type: 'new_task', key: 2, task: 'bread', desc: '', completed: false }, false, undefined],
    ['todo', { type: 'strike', key: '2,6' }, false, undefined],
    ['todo', { type: 'new_task', key: 2, task: 'bread', desc: '', completed: 'no' }, false, 'todo data["completed"] is not a boolean'],
    ['todo', { type: 'vote' }, false, 'Unknown type for todo data: vote'],
    // Zulip checks data only for the widgets it knows.
    [undefined, { anything: [1] }, false, undefined],
  ];
  for (const [widget, data, author, want] of cases) t.equal(errorOf(() => checkWidgetData(widget, data, author)), want, `${widget} ${JSON.stringify(data)}`);
});
