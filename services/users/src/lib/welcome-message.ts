/**
 * What Welcome Bot says to someone new. Written for this server; like Zulip's, it is a
 * plain direct message, so every client shows it and a new user never starts with none.
 */
export function welcomeMessage(realmName: string): string {
  return [
    `Hello, and welcome to ${realmName}! :wave: I'm Welcome Bot, and this direct message is just for you.`,
    '',
    'A few things to get you going:',
    '* Conversations happen in **streams**. Every stream message has a **topic**, so several discussions can run side by side without mixing. Browse the streams and subscribe to those you care about.',
    '* **Direct messages** like this one are seen only by the people in them.',
    '* Mention someone with `@` and their name to make sure they notice.',
    '',
    'Enjoy!',
  ].join('\n');
}
