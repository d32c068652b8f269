# The agent worker. Build: docker build -t react-agent-worker .   (docker compose builds it too)
# Runs `node dist/worker/main.js`; configure it with the environment variables in docs/configuration.md.

# Node 24, the current LTS line (the project also runs on Node 20, which CI uses).
FROM node:24.11.1-bookworm AS build
WORKDIR /app
# .npmrc points node-gyp at Debian's Node headers (/usr); the official image keeps them in /usr/local.
ENV npm_config_nodedir=/usr/local
# Sources before `npm ci`: its `prepare` script compiles them (not test/: the image runs no tests).
COPY package.json package-lock.json .npmrc tsconfig.json ./
COPY common ./common
COPY domains ./domains
COPY runtime ./runtime
COPY workflows ./workflows
COPY activities ./activities
COPY worker ./worker
COPY client ./client
COPY cli ./cli
COPY codec-server ./codec-server
# scripts/ (init-namespace, the servers, the demo), the local servers' library they use, the lint
# checks' library (scripts/ compiles as a whole) and the demo's offline model (OPENAI_BASE_URL=offline).
COPY scripts ./scripts
COPY local-servers ./local-servers
COPY lint ./lint
COPY offline-model ./offline-model
# The commit goes into the worker's build id (worker/build-id.ts); .git is not in the build context:
#   docker build --build-arg BUILD_COMMIT=$(git rev-parse --short=12 HEAD) -t react-agent-worker .
ARG BUILD_COMMIT
RUN npm ci && npm prune --omit=dev

FROM node:24.11.1-bookworm-slim
# The metrics endpoint listens on every interface of the container (Prometheus scrapes it from the
# compose network); outside a container it is loopback only.
ENV NODE_ENV=production \
    AGENT_METRICS_PORT=9464 \
    AGENT_METRICS_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The refunds ledger's folder (AGENT_REFUNDS_DB's default, .temporal/refunds.sqlite under /app), owned
# by the user the worker runs as: /app itself is root's. Compose mounts a named volume here, which
# starts out with this ownership, so every worker replica writes one ledger that outlives them.
RUN mkdir -p /app/.temporal && chown node:node /app/.temporal
USER node
EXPOSE 9464
# SIGTERM (docker stop) drains the worker: running activities finish, then it exits.
CMD ["node", "dist/worker/main.js"]
