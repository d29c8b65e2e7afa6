"""The catalog server of Microsoft's agentic-RFT tool-calling sample, built with rft_sdk.

Source of the sample data: ``microsoft-foundry/fine-tuning``,
``Demos/Agentic_RFT_PrivatePreview/RFT_ToolCall/README.md`` (a ``search_catalog``
tool, SKU ``JKT-URB-009`` "Urban Puffer", a grader comparing ``output_text`` with
``item["reference_answer"]``).
"""

from __future__ import annotations

from rft_sdk import Grade, GradingContext, Rollout, ToolServer

TOKEN = "tok-" + "c" * 24
SECRET = "grader-secret-" + "d" * 24
CATALOG = [{"sku": "JKT-URB-009", "name": "Urban Puffer", "price": 149.50},
           {"sku": "JKT-ALP-001", "name": "Alpine Light Jacket", "price": 179.99}]


def catalog_server(**kwargs) -> ToolServer:
    """A ToolServer with ``search_catalog`` and a default grader ``exact`` (token + grader secret)."""
    kwargs.setdefault("auth_tokens", [TOKEN])
    kwargs.setdefault("grader_secret", SECRET)
    server = ToolServer(auth_env_var=None, **kwargs)

    @server.tool
    def search_catalog(query: str, top_k: int = 3, *, rollout: Rollout) -> dict:
        """Search the catalog.

        Args:
            query: words of the product name.
            top_k: most items returned.
        """
        rollout.state["searches"] = rollout.state.get("searches", 0) + 1
        words = query.lower().split()
        return {"items": [i for i in CATALOG if all(w in i["name"].lower() for w in words)][:top_k],
                "searches": rollout.state["searches"]}

    @server.grader(default=True)
    def exact(ctx: GradingContext) -> Grade:
        """1.0 when the answer equals item["reference_answer"]; sub-score ``calls`` (tool calls seen)."""
        ok = ctx.output_text.strip() == str(ctx.item.get("reference_answer", ""))
        return Grade(1.0 if ok else 0.0, {"calls": float(ctx.count())}, [f"traced={ctx.traced}"])

    return server
