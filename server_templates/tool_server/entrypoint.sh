#!/bin/sh
# Container entrypoint: refuses to serve without bearer tokens unless told explicitly.
#   RFT_AUTH_TOKENS   comma-separated tokens (required)
#   RFT_ALLOW_NO_AUTH=1  serve without auth anyway (local tests only: anyone can call your tools)
#   PORT (8000), RFT_WORKERS (1; >1 needs RFT_STORE_URL=sqlite://... or redis://...)
set -eu
if [ -z "${RFT_AUTH_TOKENS:-}" ] && [ "${RFT_ALLOW_NO_AUTH:-0}" != "1" ]; then
    echo "rft tool server: refusing to start without RFT_AUTH_TOKENS (set it to comma-separated bearer" \
         "tokens, or set RFT_ALLOW_NO_AUTH=1 to serve without authentication)" >&2
    exit 64
fi
exec rft serve app:server --host 0.0.0.0 --port "${PORT:-8000}" --workers "${RFT_WORKERS:-1}" "$@"
