/**
 * Slack's App Home for the fake Slack (fake-slack-api.ts): views.publish, as strict as its documentation
 * (docs.slack.dev/reference/methods/views.publish, "Home tab views"): a `user_id`, a view of type `home` whose
 * blocks are an array of at most 100 that pass the Block Kit checks, `callback_id` at most 255 characters and
 * `private_metadata` at most 3000. Anything else is `invalid_arguments`, and nothing is published.
 */

type Answer = Record<string, unknown>;

export interface PublishedHome {
  id: string;
  userId: string;
  view: { type: 'home'; callback_id?: string; blocks: Array<Record<string, unknown>> };
}

export interface FakeSlackHome {
  /** Every view published, in order. */
  published: PublishedHome[];
  /** The home tab `userId` sees now (the last one published for them). */
  current(userId: string): PublishedHome | undefined;
}

export function createFakeSlackHome(options: {
  /** The Block Kit problems of `blocks` in a surface of `maxBlocks` (fake-slack-api.ts). */
  violations: (blocks: unknown, maxBlocks: number) => string[];
}) {
  const home: FakeSlackHome = {
    published: [],
    current: (userId) => home.published.filter((view) => view.userId === userId).at(-1),
  };
  const viewIds = new Map<string, string>();
  const invalid = (message: string): Answer => ({
    ok: false,
    error: 'invalid_arguments',
    response_metadata: { messages: [message] },
  });

  function publish(args: Record<string, unknown>): Answer {
    const userId = args.user_id;
    if (typeof userId !== 'string' || !/^[UW][A-Z0-9]+$/.test(userId)) return invalid('invalid `user_id`');
    const view = args.view as Record<string, unknown> | undefined;
    if (typeof view !== 'object' || view === null || view.type !== 'home')
      return invalid('invalid `view`: type must be home');
    const blocks = view.blocks;
    if (!Array.isArray(blocks)) return invalid('`blocks` is required');
    if (blocks.length > 100) return invalid('no more than 100 items allowed [json-pointer:/view/blocks]');
    const problems = options.violations(blocks, 100);
    if (problems.length > 0) return invalid(problems.join('; '));
    if (String(view.callback_id ?? '').length > 255) return invalid('callback_id over 255');
    if (String(view.private_metadata ?? '').length > 3000) return invalid('private_metadata over 3000');
    // One home view per user: publishing again updates it, under the same id.
    const id = viewIds.get(userId) ?? `VHOME${viewIds.size + 1}`;
    viewIds.set(userId, id);
    home.published.push({ id, userId, view: view as PublishedHome['view'] });
    return { ok: true, view: { ...view, id, hash: `${Date.now()}.${home.published.length}` } };
  }

  return {
    home,
    methods: { 'views.publish': publish } as Record<string, (args: Record<string, unknown>) => Answer>,
    reset() {
      home.published.length = 0;
      viewIds.clear();
    },
  };
}
