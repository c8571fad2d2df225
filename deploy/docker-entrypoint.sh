#!/bin/sh
# Replicas of one compose service share the volume at WEIR_REPLICA_DATA_ROOT; each serves from a data
# dir of its own under it, named for its container (its hostname), as two `weir serve` never share
# one. Unset (a single container): WEIR_DATA_DIR as given.
set -eu
if [ -n "${WEIR_REPLICA_DATA_ROOT:-}" ]; then
  WEIR_DATA_DIR="${WEIR_REPLICA_DATA_ROOT%/}/$(hostname)"
  export WEIR_DATA_DIR
fi
mkdir -p "${WEIR_DATA_DIR:-/data}"
exec "$@"
