import { describe, expect, it } from 'vitest';
import { type RecordedRequest, userParts } from '../../helpers/fake-model-server.js';
import { makePng, sampleCsv } from '../../helpers/sample-files.js';
import { messageEvent, postContent, postToButler, uniqueId } from '../../unit/feishu/feishu-events.js';
import { repliesTo, useFeishuButler } from './feishu-butler.js';

/** Files and images through the Lark SDK and the running Butler: shared ones fetched, made ones sent (issue 24). */

const suite = useFeishuButler();

const texts = (request: RecordedRequest | undefined) =>
  request
    ? userParts(request)
        .flatMap((part) => (part.type === 'text' ? [part.text] : []))
        .join('\n')
    : '';
const images = (request: RecordedRequest | undefined) =>
  request ? userParts(request).filter((part) => part.type === 'image_url') : [];

/** What Butler showed in a chat: its text and cards. */
function shownIn(chatId: string): string {
  return suite.fake
    .sentMessages()
    .filter((message) => message.chatId === chatId && message.msgType !== 'file')
    .map((message) => suite.fake.visibleText(message.messageId))
    .join('\n');
}

describe('Feishu files through the running Butler', () => {
  it('shows the model an image someone sent and the CSV attached to a post, each downloaded once', async () => {
    const imageId = uniqueId('om_');
    const chatId = uniqueId('oc_dm_');
    suite.fake.files.addResource(imageId, 'img_v3_00ef', {
      type: 'image',
      bytes: Buffer.from(await makePng(64, 32)),
      contentType: 'image/png',
    });
    suite.model.enqueue({ text: 'A blue rectangle.' });
    await postToButler(
      suite.url,
      messageEvent({
        messageId: imageId,
        chatType: 'p2p',
        chatId,
        messageType: 'image',
        content: { image_key: 'img_v3_00ef' },
      }),
    );
    await suite.app.settle();
    expect(images(suite.model.requests[0])).toHaveLength(1);
    expect(texts(suite.model.requests[0])).not.toContain('cannot view');
    expect(suite.fake.files.downloads(imageId, 'img_v3_00ef')).toBe(1);

    const postId = uniqueId('om_');
    suite.fake.files.addResource(postId, 'file_v3_00ab', {
      type: 'file',
      bytes: sampleCsv,
      contentType: 'application/octet-stream',
    });
    suite.model.enqueue({ text: 'The worker had no errors.' });
    await postToButler(
      suite.url,
      messageEvent({
        messageId: postId,
        chatType: 'p2p',
        chatId,
        messageType: 'post',
        content: postContent([[{ tag: 'text', text: 'which service failed?', style: [] }]], {
          files: [
            { file_key: 'file_v3_00ab', file_name: 'errors.csv', is_folder: false },
            { file_key: 'file_v3_00cd', file_name: 'designs', is_folder: true },
          ],
        }),
      }),
    );
    await suite.app.settle();
    const asked = texts(suite.model.requests[1]);
    expect(asked).toContain(
      'which service failed?\n[attached folder: designs; Butler cannot open attachments]',
    );
    expect(asked).toContain('worker,0');
    expect(asked).not.toContain('errors.csv; Butler cannot open');
    expect(suite.fake.files.downloads(postId, 'file_v3_00ab')).toBe(1);
    expect(suite.fake.files.downloads(imageId, 'img_v3_00ef')).toBe(1);
  });

  it('sends the CSV the model made as a file message in the thread it answers', async () => {
    const messageId = uniqueId('om_');
    const threadId = uniqueId('omt_');
    suite.model.enqueue(
      {
        toolCalls: [
          {
            id: 'call_csv',
            name: 'attach_file',
            arguments: JSON.stringify({ filename: 'errors.csv', content: sampleCsv }),
          },
        ],
      },
      { text: 'Here is the CSV.' },
    );
    await postToButler(
      suite.url,
      messageEvent({ messageId, threadId, text: '@_user_1 send me the errors as CSV' }),
    );
    await suite.app.settle();
    const [sent, ...more] = repliesTo(suite.fake, messageId).filter((message) => message.msgType === 'file');
    expect(more).toHaveLength(0);
    expect(sent).toMatchObject({ replyTo: messageId, replyInThread: true });
    expect(sent?.upload).toMatchObject({ kind: 'file', fileType: 'stream', fileName: 'errors.csv' });
    expect(sent?.upload?.bytes.toString()).toBe(sampleCsv);
    const answer = repliesTo(suite.fake, messageId).find((message) => message.msgType === 'interactive');
    expect(answer).toMatchObject({ replyInThread: true });
    expect(suite.fake.visibleText(answer?.messageId ?? '')).toContain('Here is the CSV.');
  });

  it('tells the person which scope to add when Feishu will not hand the file over, and still answers', async () => {
    const messageId = uniqueId('om_');
    const chatId = uniqueId('oc_dm_');
    suite.fake.files.addResource(messageId, 'file_v3_11', {
      type: 'file',
      bytes: 'x',
      contentType: 'text/plain',
    });
    suite.fake.files.scopeMissing = true;
    suite.model.enqueue({ text: 'I could not read it.' });
    try {
      await postToButler(
        suite.url,
        messageEvent({
          messageId,
          chatType: 'p2p',
          chatId,
          messageType: 'file',
          content: { file_key: 'file_v3_11', file_name: 'notes.txt' },
        }),
      );
      await suite.app.settle();
    } finally {
      suite.fake.files.scopeMissing = false;
    }
    const shown = shownIn(chatId);
    expect(shown).toContain('notes.txt: I could not download it');
    expect(shown).toContain('scopes is required: [im:message');
    expect(shown).toContain('add one of those scopes under Permissions & Scopes');
    expect(shown).toContain('I could not read it.');
  });
});
