-- Memories saved before people existed are owned by their identity: `<platform>:<id>` is that identity's key.
UPDATE "memories" SET "owner_key" = "platform" || ':' || "user_id" WHERE "owner_key" = '';
