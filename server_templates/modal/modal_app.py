"""Modal deployment of the template tool server (replicas share rollout state in Redis).

    modal secret create rft-tool-server RFT_AUTH_TOKENS=$(openssl rand -hex 32) \\
        RFT_STORE_URL=rediss://:<password>@<host>:6380/0
    modal deploy server_templates/modal/modal_app.py     # prints the https:// URL

The image installs the SDK from this checkout (``rft-sdk`` is not on a package
index): the repository is copied in at build time, without ``.venv``, ``.git``
or run outputs, and ``pip install "/src[redis]"`` builds it there.

Scale: ``min_containers`` keeps replicas warm (hosted runs send bursts),
``max_containers`` caps them; each container serves up to ``max_inputs``
concurrent requests. Redis must be reachable from Modal (a managed Redis with
TLS and persistence). Modal answers a web request that runs past 150 s with a
303 redirect, which the hosted service does not follow: keep every tool and the
grader under 150 s (e.g. ``@tool(timeout_s=120)``).
"""

from __future__ import annotations

from pathlib import Path

import modal

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
#: What the build context leaves out (dockerignore syntax, as modal.Image.add_local_dir reads it).
IGNORE = [".venv", "**/.venv", ".git", "runs", "**/__pycache__", "**/*.pyc", "benchmarks", "tests", "examples",
          "kernels", "local_trainer", "docs"]
image = (
    modal.Image.debian_slim(python_version="3.11")
    .add_local_dir(ROOT, "/src", copy=True, ignore=IGNORE)
    .run_commands('pip install --no-cache-dir "/src[redis]"')
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
