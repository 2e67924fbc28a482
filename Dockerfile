# syntax=docker/dockerfile:1
# Agentry image: one image, three commands (DESIGN §8). The api is the default command; the worker
# runs the same image with `node dist/worker.js`, the migrations with `node dist/migrate.js`
# (docker-compose.yml, deploy/helm/agentry). Node 24, the LTS line supported longest
# (docs/decisions.md, "Kubernetes"). It runs as a numeric non-root user and writes nothing outside
# /tmp, so a read-only root file system (Kubernetes' restricted profile) suits it.

# ---- build: compile TypeScript and prebuild the workflow bundle (dist/workflow-bundle.js), so a
# worker start never runs webpack (notes/temporal.md §7).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# ---- runtime: production dependencies and the compiled output only.
FROM node:24-bookworm-slim AS runtime
# ca-certificates: the Temporal core bridge (Rust) reads the system trust store for TLS connections
# to a Temporal cluster; Node itself ships its own CA bundle.
RUN apt-get update \
  && apt-get install -y --no-install-recommends ca-certificates \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
  AGENTRY_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund
# Owned by root and read-only for the app user: the processes write nothing to their own tree.
COPY --from=build /app/dist ./dist
# The image's `node` user by number: `runAsNonRoot: true` can verify a uid, never a name.
USER 1000:1000
EXPOSE 8080
CMD ["node", "dist/api/server.js"]
