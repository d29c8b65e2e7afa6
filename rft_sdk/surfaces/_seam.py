"""The one seam between the core and every surface.

A *surface* serves the same tools and grader through another ecosystem's
protocol (MCP, OpenEnv, ...). It does three things, and only through the
hosted pipeline (``docs/ARCHITECTURE.md``, "Surfaces"):

1. maps its protocol's session (an MCP session, an OpenEnv episode) to a
   rollout ``trace_id``;
2. maps each of its tool calls to one hosted ``POST /tools/{name}`` request of
   that ``trace_id`` (so validation, per-rollout state, idempotency, limits,
   recording and metrics are the hosted ones);
3. maps its end of episode to one hosted ``POST /grade`` request.

The core hands a surface a :class:`SurfaceContext` (no ``ToolServer``: the
surface never imports the server) and gets back a :class:`SurfaceMount`
(routes and an optional lifespan) that :func:`compose` puts in front of the
hosted routes, behind the server's one ``AuthMiddleware``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from starlette.applications import Starlette
from starlette.routing import BaseRoute, Mount
from starlette.types import ASGIApp

if TYPE_CHECKING:  # httpx (and with it, where installed, rich) is imported only when a surface runs
    from ._hosted import HostedClient

__all__ = ["Surface", "SurfaceContext", "SurfaceMount", "compose"]


@dataclass(frozen=True)
class SurfaceContext:
    """What the core gives a surface.

    Attributes:
        pipeline: the hosted routes as an ASGI app, in process. Requests sent to it
            are not authenticated again: a surface sends only requests that came
            through the server's ``AuthMiddleware`` (or its own :attr:`protect`).
        protect: wraps an ASGI app in the server's ``AuthMiddleware`` (same tokens,
            same headers: ``Authorization: Bearer``, ``X-Functions-Key``, ``api-key``);
            for apps served outside the ``ToolServer`` (``rft_sdk.mcp.mcp_app``).
        tools: returns the chat-completions tool definitions now (``server.dataset_tools()``;
            a callable: tools may be registered after the surface is mounted).
        graders: grader names; ``default_grader`` serves ``POST /grade``.
    """

    pipeline: ASGIApp
    protect: Callable[[ASGIApp], ASGIApp]
    tools: Callable[[], Sequence[Mapping[str, Any]]]
    graders: Sequence[str]
    default_grader: str | None

    def hosted_client(self, *, timeout_s: float | None = None) -> HostedClient:
        """A :class:`HostedClient` sending hosted requests to :attr:`pipeline` in process."""
        from ._hosted import HostedClient

        return HostedClient.in_process(self.pipeline, timeout_s=timeout_s)


@dataclass
class SurfaceMount:
    """What a surface adds to the app: ``routes`` (matched before the hosted routes)
    and a ``lifespan`` (an async context manager factory run for the server's life)."""

    routes: Sequence[BaseRoute] = field(default_factory=list)
    lifespan: Callable[[], AbstractAsyncContextManager[Any]] | None = None


@runtime_checkable
class Surface(Protocol):
    """A surface: ``name`` (as in ``rft serve --surfaces``) and :meth:`mount`."""

    name: str

    def mount(self, context: SurfaceContext) -> SurfaceMount:
        """The routes and lifespan serving this surface over ``context`` (called once per server)."""
        ...


def compose(hosted: ASGIApp, mounts: Sequence[SurfaceMount], *, expose_hosted: bool,
            fallback: Sequence[BaseRoute] = (), exception_handlers: Mapping[Any, Any] | None = None,
            lifespan: Callable[[], AbstractAsyncContextManager[Any]] | None = None) -> ASGIApp:
    """One ASGI app: each surface's routes, then the hosted routes (or only ``fallback``
    routes, e.g. ``/healthz``, when the hosted surface is not exposed), with the core's
    ``lifespan`` (the server's own: stores, databases) entered first and every surface's
    lifespan after it, for the app's life. No surface: ``hosted`` itself (which runs the
    core's lifespan on its own)."""
    if not mounts:
        return hosted
    routes: list[BaseRoute] = [route for mount in mounts for route in mount.routes]
    routes += [Mount("", app=hosted)] if expose_hosted else list(fallback)
    lifespans = [*([lifespan] if lifespan is not None else []), *(m.lifespan for m in mounts if m.lifespan is not None)]

    @contextlib.asynccontextmanager
    async def run_lifespans(app: Starlette) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            for factory in lifespans:
                await stack.enter_async_context(factory())
            yield

    return Starlette(routes=routes, lifespan=run_lifespans, exception_handlers=dict(exception_handlers or {}))
