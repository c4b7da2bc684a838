# partner-enrich: the CLI on Node 24, as a non-root user. Node 24 runs the TypeScript sources
# directly (type stripping); the image runs them bundled by esbuild (`npm run bundle`), which
# takes a third off the CPU `run` spends from exec to ready. It holds the bundle, the production
# dependencies and what the commands read at run time. docs/CONTAINER.md.
#
#   docker build -t partner-enrich .
#   podman build --format docker --build-arg BASE_IMAGE=<local base> -t partner-enrich .
#
# BASE_IMAGE is the official Node 24 slim image unless replaced; where no registry can be
# reached, deploy/container/local-base.ts builds a stand-in from Debian packages.
ARG BASE_IMAGE=node:24-slim

# Production dependencies only: the `node` dev dependency (the repository's own Node 24
# binary) stays out, the runtime is the base image's. No install scripts of the dependencies:
# none is needed. The project's own postinstall, patch-package, applies patches/ to kafkajs:
# its producer's CPU per message (docs/ARCHITECTURE.md, kafkajs patched).
FROM ${BASE_IMAGE} AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
    && node_modules/.bin/patch-package --error-on-fail \
    && rm -rf "$(npm config get cache)"

# The bundle: the sources and their dependencies in a few files (the sandbox and the tracing SDK
# in chunks of their own, loaded only by the commands that use them). esbuild alone is
# installed, at the lockfile's version, not the other dev dependencies.
FROM ${BASE_IMAGE} AS bundle
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --prefix /opt/esbuild --no-save --ignore-scripts --no-audit --no-fund \
      "esbuild@$(node -p "require('./package-lock.json').packages['node_modules/esbuild'].version")" \
    && rm -rf "$(npm config get cache)"
COPY --from=dependencies /app/node_modules ./node_modules
COPY bin ./bin
COPY src ./src
RUN PATH="/opt/esbuild/node_modules/.bin:$PATH" npm run bundle && chmod 755 dist/bin/partner-enrich.js

FROM ${BASE_IMAGE}
# NODE_COMPILE_CACHE: V8's compiled code of the bundle, made at build below.
# The endpoints (/metrics, /healthz, /readyz) listen on every interface of the container, for
# probes and scrapers; set PARTNER_ENRICH_OBSERVABILITY__METRICS_HOST to change it (the
# environment wins over a configuration file).
ENV NODE_ENV=production \
    NODE_COMPILE_CACHE=/var/cache/partner-enrich/node \
    PARTNER_ENRICH_OBSERVABILITY__METRICS_HOST=0.0.0.0
WORKDIR /app
# node_modules: the few packages the bundle requires when first used (ajv, yaml, the native
# Snappy and LZ4 codecs of compressed topics), and any other a user's code may import.
# dist/bin sits two levels below /app, as every source module does below the repository: the paths they resolve from their own location (schemas/) hold.
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json ./
COPY --from=bundle /app/dist ./dist
COPY schemas ./schemas
# The input of `demo` (files.input's default); its outputs go to out/ (files.outputDir).
COPY examples/partners.ndjson ./examples/
# uid 1000 is the official image's `node` user. It owns only what it writes: the compile
# cache and the outputs of `demo`; the application files stay root's.
RUN mkdir -p /var/cache/partner-enrich/node out && chown -R 1000:1000 /var/cache/partner-enrich out \
    && ln -s /app/dist/bin/partner-enrich.js /usr/local/bin/partner-enrich
# `partner-enrich <command>` on the PATH, for `kubectl exec` and `podman exec` (docs/OPERATIONS.md).
USER 1000:1000
RUN ./dist/bin/partner-enrich.js --help > /dev/null

EXPOSE 9464
# /healthz of `run` on observability.metricsPort (9464 unless set through the environment):
# 200 while the process works, 503 after a fatal failure. The base has no curl: node fetches.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PARTNER_ENRICH_OBSERVABILITY__METRICS_PORT || 9464}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

ENTRYPOINT ["/app/dist/bin/partner-enrich.js"]
CMD ["run"]

# Last, so that a new revision or date does not rebuild the layers above.
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
ARG BASE_IMAGE
LABEL org.opencontainers.image.title="partner-enrich" \
      org.opencontainers.image.description="Enriches business-partner records in bulk against a reference data service: Kafka or NDJSON in; matches, events, storage and dead letters out" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.base.name="${BASE_IMAGE}"
