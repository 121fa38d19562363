/**
 * What Welcome Bot posts in a new realm's "general" stream, as Zulip posts its initial realm
 * messages there: a newcomer's first stream is never empty (zulip-terminal, for one, cannot
 * open the compose box in a stream it has no message of), and the two topics show how topics
 * keep conversations apart.
 */
export interface GeneralWelcomePost {
  topic: string;
  content: string;
}

export function generalWelcomePosts(realmName: string): GeneralWelcomePost[] {
  return [
    {
      topic: 'greetings',
      content: [
        `This is #**general**, where everyone in ${realmName} starts out. :wave:`,
        '',
        'Say hello to your colleagues in this topic, or start a topic of your own for anything the whole organization should see.',
      ].join('\n'),
    },
    {
      topic: 'how topics work',
      content: [
        'Every stream message belongs to a **topic**, like this one. Replies go to the same topic, so several conversations can share a stream without getting tangled.',
        '',
        'Pick a short topic that says what a conversation is about; you can rename or move it later.',
      ].join('\n'),
    },
  ];
}
