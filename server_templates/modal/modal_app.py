"""Modal deployment of the template tool server (replicas share rollout state in Redis).

    modal secret create rft-tool-server RFT_AUTH_TOKENS=$(openssl rand -hex 32) \
        RFT_STORE_URL=rediss://:<password>@<host>:6380/0
    modal deploy server_templates/modal/modal_app.py     # prints the https:// URL

Scale: ``min_containers`` keeps replicas warm (hosted runs send bursts),
``max_containers`` caps them; each container serves up to ``max_inputs``
concurrent requests. Redis must be reachable from Modal (a managed Redis with TLS).
"""

from __future__ import annotations

from pathlib import Path

import modal

HERE = Path(__file__).resolve().parent
image = (
    modal.Image.debian_slim(python_version="3.11")
    .pip_install("rft-sdk[redis]")
    .add_local_file(HERE.parent / "tool_server" / "app.py", "/root/tool_app.py")
)
app = modal.App("rft-tool-server")


@app.function(image=image, secrets=[modal.Secret.from_name("rft-tool-server")], min_containers=2,
              max_containers=20, timeout=660)
@modal.concurrent(max_inputs=100)
@modal.asgi_app()
def serve() -> object:
    """The ToolServer of ``tool_server/app.py`` as Modal's ASGI app (tokens and store from the secret)."""
    import tool_app

    return tool_app.server
