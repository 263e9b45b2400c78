import { defineConfig } from 'drizzle-kit';

// Migrations are generated from the schema (`npm run db:generate`) and committed; never edited by hand,
// except those made with `drizzle-kit generate --custom` for what the schema cannot say (a SQL function).
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/storage/schema.ts',
  out: './drizzle',
  strict: true,
});
