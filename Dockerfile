# syntax=docker/dockerfile:1
# Gatehouse: the server runs its TypeScript through tsx (a runtime dependency), so the server needs no
# build step. The console is a browser bundle: the first stage builds it (npm ci runs `prepare`), the
# second installs production dependencies only, the last is what runs.

FROM node:20-slim AS console
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund && test -f console/dist/index.html

FROM node:20-slim AS deps
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/
# No scripts: `prepare` builds the console, which the first stage did with its dev dependencies.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    METRICS_PORT=9464 \
    DATA_DIR=/data
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node . .
COPY --from=console --chown=node:node /app/console/dist ./console/dist
RUN mkdir -p /data && chown node:node /data
# The image's unprivileged user (uid 1000); DATA_DIR is the only place it writes.
USER node
VOLUME ["/data"]
# The public listener (PORT) and Prometheus metrics (METRICS_PORT), never on the same port.
EXPOSE 3000 9464
# /readyz answers 503 while the database is unreachable; node:20-slim has no curl.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# node itself is PID 1 (no npm, no shell): it receives SIGTERM and the server handles it (stops
# accepting, finishes requests in flight, closes the pools). PID 1 gets no default signal handlers,
# so handling them in the server is what makes `docker stop` quick.
STOPSIGNAL SIGTERM
CMD ["node", "--import", "tsx", "src/main.ts"]
