import t from 'tap';
import { peerRecipients, streamAudience } from '../../src/lib/audience.js';
import { checkPropertyValue, isSubscriptionProperty, storedChange } from '../../src/lib/subscription-properties.js';

const people = { everyone: [1, 2, 3, 4, 6], members: [1, 2, 3, 4], admins: [1] };

t.test('who hears about a stream', async (t) => {
  t.same(streamAudience({ invite_only: false, is_web_public: false }, [6], people), [1, 2, 3, 4, 6], 'public: members and subscribed guests');
  t.same(streamAudience({ invite_only: false, is_web_public: false }, [], people), [1, 2, 3, 4], 'guests who are not subscribed do not');
  t.same(streamAudience({ invite_only: false, is_web_public: true }, [], people), [1, 2, 3, 4, 6], 'web-public: everyone');
  t.same(streamAudience({ invite_only: true, is_web_public: false }, [3, 6], people), [1, 3, 6], 'private: subscribers and administrators');
  t.same(peerRecipients({ invite_only: true, is_web_public: false }, [3, 6], people, [6]), [1, 3], 'the changed users are left out');
});

t.test('subscription properties and their values', async (t) => {
  t.ok(isSubscriptionProperty('in_home_view'));
  t.notOk(isSubscriptionProperty('name'));
  t.equal(checkPropertyValue('color', '#aabbcc'), '#aabbcc');
  t.throws(() => checkPropertyValue('color', 'red'), { message: 'color is not a valid hex color code' });
  t.throws(() => checkPropertyValue('color', true), { message: 'color is not a string' });
  t.throws(() => checkPropertyValue('pin_to_top', 'yes'), { message: 'pin_to_top is not a boolean' });
  t.same(storedChange('in_home_view', false), { property: 'is_muted', value: true }, 'in_home_view is stored as the inverse is_muted');
  t.same(storedChange('pin_to_top', true), { property: 'pin_to_top', value: true });
});
