#!/bin/sh
# Container entrypoint: refuses to serve without real bearer tokens unless told explicitly.
#   RFT_AUTH_TOKENS   comma-separated tokens (required; each at least 16 characters and not a template
#                     placeholder such as change-me / REPLACE-WITH-... / <token>)
#   RFT_ALLOW_NO_AUTH=1  serve without auth anyway (local tests only: anyone can call your tools)
#   PORT (8000), RFT_WORKERS (1; >1 needs RFT_STORE_URL=sqlite://... or redis://...)
# `rft serve` then exits when the store in RFT_STORE_URL does not answer, and serves /healthz (liveness)
# and /readyz (the store and the app's readiness checks).
set -eu
refuse() {
    echo "rft tool server: refusing to start: $1" >&2
    exit 64
}
if [ -z "${RFT_AUTH_TOKENS:-}" ]; then
    if [ "${RFT_ALLOW_NO_AUTH:-0}" != "1" ]; then
        refuse "RFT_AUTH_TOKENS is not set (set it to comma-separated bearer tokens, e.g. \$(openssl rand -hex 32),
or set RFT_ALLOW_NO_AUTH=1 to serve without authentication)"
    fi
else
    old_ifs=$IFS
    IFS=,
    for token in $RFT_AUTH_TOKENS; do
        token=$(printf '%s' "$token" | tr -d ' ')
        lowered=$(printf '%s' "$token" | tr 'A-Z' 'a-z')
        case "$lowered" in
            *change-me*|*changeme*|*replace*|*placeholder*|*example*|*your-token*|*'<'*|*'>'*|*'${'*)
                refuse "RFT_AUTH_TOKENS holds the template placeholder '$token'; generate a token with openssl rand -hex 32" ;;
        esac
        if [ "${#token}" -lt 16 ]; then
            refuse "a token in RFT_AUTH_TOKENS has ${#token} characters; use at least 16 (openssl rand -hex 32)"
        fi
    done
    IFS=$old_ifs
fi
exec rft serve app:server --host 0.0.0.0 --port "${PORT:-8000}" --workers "${RFT_WORKERS:-1}" "$@"
