import { createHash, randomUUID } from 'node:crypto';
import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { FileRepository, StoredFile } from '../../core/contracts/store.js';
import type { Database } from '../database.js';
import { fileContents, files } from '../schema.js';

const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

const toStoredFile = ({ note, ...row }: typeof files.$inferSelect): StoredFile => ({
  ...row,
  uploadedBy: row.uploadedBy ?? null,
  ...(note ? { note } : {}),
});

/** Files by reference, their content once per SHA-256 (`file_contents`). */
export function fileRepository(db: Database): FileRepository {
  const storeContent = async (bytes: Uint8Array) => {
    const sha256 = sha256Of(bytes);
    await db
      .insert(fileContents)
      .values({ sha256, bytes, size: bytes.byteLength })
      .onConflictDoNothing({ target: fileContents.sha256 });
    return sha256;
  };

  const findByKey: FileRepository['findByKey'] = async (platform, key) => {
    const [row] = await db
      .select()
      .from(files)
      .where(and(eq(files.platform, platform), eq(files.key, key)));
    return row ? toStoredFile(row) : undefined;
  };

  return {
    findByKey,

    async save({ bytes, preview, ...file }) {
      const sha256 = await storeContent(bytes);
      const previewSha256 = preview ? await storeContent(preview) : null;
      const [row] = await db
        .insert(files)
        .values({
          ...file,
          note: file.note ?? null,
          id: `file_${randomUUID().replaceAll('-', '')}`,
          sha256,
          previewSha256,
        })
        .onConflictDoNothing({ target: [files.platform, files.key] })
        .returning();
      if (row) return toStoredFile(row);
      const existing = await findByKey(file.platform, file.key);
      if (!existing) throw new Error(`Could not save file ${file.key}`);
      return existing;
    },

    async get(id) {
      const [row] = await db.select().from(files).where(eq(files.id, id));
      return row ? toStoredFile(row) : undefined;
    },

    async list(ids) {
      if (ids.length === 0) return [];
      const rows = await db
        .select()
        .from(files)
        .where(inArray(files.id, [...ids]));
      return rows.map(toStoredFile);
    },

    async content(sha256) {
      const [row] = await db
        .select({ bytes: fileContents.bytes })
        .from(fileContents)
        .where(eq(fileContents.sha256, sha256));
      return row ? new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength) : undefined;
    },

    async markDelivered(id, deliveredAs) {
      const rows = await db
        .update(files)
        .set({ deliveredAs })
        .where(and(eq(files.id, id), isNull(files.deliveredAs)))
        .returning({ id: files.id });
      return rows.length > 0;
    },
  };
}
