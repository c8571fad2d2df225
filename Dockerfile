# Two stages: the first has the compilers native modules need (better-sqlite3), the image Weir runs
# in has none of them, only Node, the production dependencies and the sources (tsx runs them).
FROM node:20-bookworm-slim AS dependencies
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY machines ./machines
COPY --chmod=0755 deploy/docker-entrypoint.sh /usr/local/bin/weir-entrypoint
# npm ci --omit=dev keeps anvil (@foundry-rs/anvil is a dependency), but an image is for deployments:
# no local test chain unless asked for with -e WEIR_LOCAL_CHAIN=on (or a list such as evm,solana).
ENV HOST=0.0.0.0 PORT=8080 WEIR_DATA_DIR=/data WEIR_LOCAL_CHAIN=off
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
# 0 while ok or degraded, 1 while failing (the log or the read models) or not answering.
HEALTHCHECK --interval=30s --timeout=10s --start-period=120s --retries=3 CMD ["node", "bin/weir.js", "health"]
# Picks a replica's own data dir under a shared volume when WEIR_REPLICA_DATA_ROOT is set (compose does).
ENTRYPOINT ["/usr/local/bin/weir-entrypoint"]
CMD ["node", "bin/weir.js", "serve"]
