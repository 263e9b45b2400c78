import { count } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewStoredFile, Store } from '../../../src/core/contracts/store.js';
import { fileContents } from '../../../src/storage/schema.js';
import { createStore } from '../../../src/storage/store.js';
import { databaseKind, openTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { makePng } from '../../helpers/sample-files.js';

let database: TestDatabase;
let store: Store;

beforeAll(async () => {
  database = await openTestDatabase();
  store = createStore(database.db);
});
afterAll(() => database.close());

const newFile = (key: string, bytes: Uint8Array, overrides: Partial<NewStoredFile> = {}): NewStoredFile => ({
  conversationKey: 'slack:T1:C1:1.0',
  platform: 'slack',
  key,
  origin: 'shared',
  uploadedBy: { platform: 'slack', id: 'U1', name: 'Ana' },
  name: `${key}.png`,
  mimeType: 'image/png',
  size: bytes.byteLength,
  kind: 'image',
  description: 'a picture',
  tokens: 255,
  text: null,
  previewMimeType: null,
  bytes,
  ...overrides,
});

const contentRows = async () =>
  (await database.db.select({ rows: count() }).from(fileContents))[0]?.rows ?? 0;

describe(`files in the store (${databaseKind})`, () => {
  it('keeps bytes whole and the same content once, however many files share it', async () => {
    const png = await makePng(40, 30);
    const before = await contentRows();
    const first = await store.files.save(newFile('F1', png));
    const second = await store.files.save(newFile('F2', png, { conversationKey: 'slack:T1:C2:2.0' }));
    expect(second.id).not.toBe(first.id);
    expect(second.sha256).toBe(first.sha256);
    expect((await contentRows()) - before).toBe(1);
    const bytes = await store.files.content(first.sha256);
    expect(Buffer.from(bytes ?? []).equals(Buffer.from(png))).toBe(true);
  });

  it('returns the file stored first when the same platform key is saved again', async () => {
    const png = await makePng(20, 20);
    const first = await store.files.save(newFile('F3', png));
    const again = await store.files.save(newFile('F3', await makePng(21, 21), { name: 'other.png' }));
    expect(again).toEqual(first);
    expect(await store.files.findByKey('slack', 'F3')).toEqual(first);
    expect(await store.files.findByKey('feishu', 'F3')).toBeUndefined();
  });

  it('records a produced file as sent once', async () => {
    const file = await store.files.save(newFile('call:c1:0', new Uint8Array([1, 2, 3]), { origin: 'tool' }));
    expect(await store.files.markDelivered(file.id, 'F0SENT')).toBe(true);
    expect(await store.files.markDelivered(file.id, 'F0AGAIN')).toBe(false);
    expect((await store.files.get(file.id))?.deliveredAs).toBe('F0SENT');
    expect((await store.files.list([file.id, 'file_missing'])).map((entry) => entry.id)).toEqual([file.id]);
  });
});
