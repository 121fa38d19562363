/**
 * The notification bot's messages about streams, with Zulip 6's texts: notices posted to the
 * stream's "stream events" topic when an administrator changes it, and the direct message
 * to someone subscribed by another user. Pure: callers pass names and values.
 */

/** Zulip's Realm.STREAM_EVENTS_NOTIFICATION_TOPIC. */
export const STREAM_EVENTS_TOPIC = 'stream events';

export interface Person {
  id: number;
  full_name: string;
}

/** A mention that does not notify (Zulip's silent_mention_syntax_for_user). */
export const silentMention = (u: Person) => `@_**${u.full_name}|${u.id}**`;

export const renameNotice = (by: Person, oldName: string, newName: string) =>
  `${silentMention(by)} renamed stream **${oldName}** to **${newName}**.`;

export function descriptionNotice(by: Person, oldDescription: string, newDescription: string): string {
  const shown = (d: string) => (d === '' ? '*No description.*' : d);
  return (
    `${silentMention(by)} changed the description for this stream.\n\n` +
    `* **Old description:**\n\`\`\`\` quote\n${shown(oldDescription)}\n\`\`\`\`\n` +
    `* **New description:**\n\`\`\`\` quote\n${shown(newDescription)}\n\`\`\`\``
  );
}

export const permissionNotice = (by: Person, oldPolicy: string, newPolicy: string) =>
  `${silentMention(by)} changed the [access permissions](/help/stream-permissions) for this stream from **${oldPolicy}** to **${newPolicy}**.`;

/** Zulip's Stream.POST_POLICIES descriptions, by stream_post_policy. */
const POST_POLICY_NAMES: Readonly<Record<number, string>> = {
  1: 'All stream members can post',
  2: 'Only organization administrators can post',
  3: 'Only organization full members can post',
  4: 'Only organization administrators and moderators can post',
};

export const postPolicyNotice = (by: Person, oldPolicy: number, newPolicy: number) =>
  `${silentMention(by)} changed the [posting permissions](/help/stream-sending-policy) for this stream:\n\n` +
  `* **Old permissions**: ${POST_POLICY_NAMES[oldPolicy] ?? String(oldPolicy)}.\n` +
  `* **New permissions**: ${POST_POLICY_NAMES[newPolicy] ?? String(newPolicy)}.\n`;

/** Days as a notice shows them: -1 (keep forever) is "Forever". */
const retentionPeriod = (days: number) => (days === -1 ? 'Forever' : `${days} days`);

/** `oldDays`/`newDays` are effective periods (a stream inheriting the realm's shows the realm's). */
export function retentionNotice(by: Person, oldDays: number, newDays: number): string {
  const summary =
    newDays === -1
      ? 'Messages in this stream will now be retained forever.'
      : `Messages in this stream will now be automatically deleted ${newDays} days after they are sent.`;
  return (
    `${silentMention(by)} has changed the [message retention period](/help/message-retention-policy) for this stream:\n` +
    `* **Old retention period**: ${retentionPeriod(oldDays)}\n` +
    `* **New retention period**: ${retentionPeriod(newDays)}\n\n` +
    summary
  );
}

/** Zulip's you_were_just_subscribed_message: stream names sorted, one line each when several. */
export function subscribedYouMessage(by: Person, streamNames: readonly string[]): string {
  const names = [...streamNames].sort();
  const who = `@**${by.full_name}|${by.id}**`;
  if (names.length === 1) return `${who} subscribed you to the stream #**${names[0]}**.`;
  return `${who} subscribed you to the following streams:\n\n${names.map((n) => `* #**${n}**\n`).join('')}`;
}
