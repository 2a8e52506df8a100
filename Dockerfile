# syntax=docker/dockerfile:1
# Neo: build with dev dependencies, ship only production dependencies and compiled JS.
# Checked against docker-compose.yml, .env.example and src/config.ts by test/deploy/container-config.test.ts.

FROM node:26-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM node:26-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node package.json ./
COPY --chown=node:node agents ./agents
# NEO_DATA_DIR's default, ./data, is /app/data here: the file store and the filesystem tool's root.
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.NEO_HTTP_PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself; Neo drains turns and exits 0.
# Register Discord commands from the image: docker compose run --rm neo npm run register:discord:prod
CMD ["node", "dist/main.js"]
