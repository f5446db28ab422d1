#!/bin/sh
# One entry point for the README's commands: installs what is missing, then runs.
#   sh scripts/run.sh start | test | bench <name> [args]
set -e
cd "$(dirname "$0")/.."
PNPM_VERSION=10.34.8
pnpm_cmd() {
  if command -v pnpm >/dev/null 2>&1 && [ "$(pnpm --version 2>/dev/null)" = "$PNPM_VERSION" ]; then pnpm "$@"
  else npx -y "pnpm@$PNPM_VERSION" "$@"; fi
}
# Install when node_modules is missing or older than the lockfile.
if [ ! -f node_modules/.modules.yaml ] || [ pnpm-lock.yaml -nt node_modules/.modules.yaml ]; then
  pnpm_cmd install --frozen-lockfile --config.engine-strict=false
fi
what="$1"; [ $# -gt 0 ] && shift
# A 128 MB young generation: the engine folds thousands of events per batch and most of what it
# allocates (events, the BigInts of its arithmetic) dies within the batch; a larger nursery lets it
# die there instead of being copied and promoted. Ingest keeps two batches in flight across their
# database round trips: 128 MB folded 4% more of them per second than 64 (docs/engineering.md).
NODE_GC="--max-semi-space-size=128"
case "$what" in
  # The server bundled into one file first (scripts/bundle.mjs: it loads seconds sooner than the
  # source through tsx, so a restart serves sooner); stack traces map back to the source.
  # Transparent huge pages for what malloc hands out (typed arrays, file buffers; glibc 2.35+, others
  # ignore it): a restart restores gigabytes into fresh memory, and on these VMs every 4 KB page's
  # first touch is a costly fault (docs/storage.md, "Snapshots": the process itself).
  start) server=$(node scripts/bundle.mjs) && GLIBC_TUNABLES=glibc.malloc.hugetlb=1 exec node $NODE_GC --enable-source-maps "$server" "$@" ;;
  test) exec node scripts/test.mjs "$@" ;;
  keys) exec node --import tsx apps/server/src/keys.ts "$@" ;;
  bench)
    name="$1"; [ $# -gt 0 ] && shift
    if [ -z "$name" ] || [ ! -f "apps/server/bench/$name.ts" ]; then
      echo "usage: pnpm bench <name> — one of: $(ls apps/server/bench | sed -n 's/\.ts$//p' | tr '\n' ' ')" >&2; exit 2
    fi
    exec node $NODE_GC --expose-gc --max-old-space-size=8192 --import tsx "apps/server/bench/$name.ts" "$@" ;;
  *) echo "usage: sh scripts/run.sh start|test|bench <name>" >&2; exit 2 ;;
esac
