# syntax=docker/dockerfile:1
# Butler's image: the production dependencies only, run as the unprivileged `node` user.
# `docker compose up` runs it with Postgres (compose.yaml); README "Run it with Docker".

FROM node:20-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# patches/ fixes a crash in the Postgres driver (see the patch); npm ci applies it with patch-package.
COPY patches ./patches
# Exactly the lockfile's production tree; npm's cache stays behind in this stage.
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    PORT=3000
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json LICENSE ./
COPY drizzle ./drizzle
COPY src ./src
# The embedded database (BUTLER_DATA_DIR, default ./.butler) when DATABASE_URL is unset: the only place
# Butler writes, so the code stays owned by root and read-only to the service.
RUN mkdir .butler && chown node:node .butler
USER node
VOLUME ["/app/.butler"]
EXPOSE 3000
# Ready means the database answers and every adapter is connected. The slim image has no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 3000}/readyz`).then((response) => process.exit(response.ok ? 0 : 1), () => process.exit(1))"]
# Node itself, not npm or the tsx CLI, so SIGTERM reaches Butler's graceful shutdown directly.
CMD ["node", "--import", "tsx", "src/main.ts"]
