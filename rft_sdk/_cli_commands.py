"""The plumbing of ``rft``'s declared sub-commands: found without importing them, loaded when run.

A sub-command is an entry point of the ``rft_sdk.commands`` group whose module
defines ``HELP``, ``add_arguments(parser)`` and ``run(args)``. ``rft --help``
lists them all without importing any (their ``HELP`` is read from the module's
source with :mod:`ast`), so it never pays for torch or matplotlib; only the
command being run is imported. When that import fails for want of an extra,
the message names the extra that provides it (:data:`COMMAND_EXTRAS`, checked
against the installed package's ``Provides-Extra``), never a guessed one.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from importlib.machinery import PathFinder
from importlib.metadata import EntryPoint, PackageNotFoundError, distribution, entry_points, metadata, requires
from types import ModuleType
from typing import Any

__all__ = ["COMMANDS_GROUP", "COMMAND_EXTRAS", "FactoryError", "bare_factory", "close_option", "env_secret",
           "factory_problem", "load_app", "load_command", "load_server", "missing_extra", "plugin_commands",
           "share_arg", "standalone_main", "static_help", "subparser"]

#: Entry-point group through which packages declare ``rft`` sub-commands.
COMMANDS_GROUP = "rft_sdk.commands"
#: The extra each of this package's commands needs (commands not listed need only the core).
COMMAND_EXTRAS = {"emulate": "emulate", "doctor": "emulate", "train": "train", "top": "observe"}
_DIST = "rft-sdk"


def plugin_commands() -> dict[str, EntryPoint]:
    """Sub-commands declared in the ``rft_sdk.commands`` entry-point group, by name."""
    return {ep.name: ep for ep in entry_points(group=COMMANDS_GROUP)}


def _module_file(dotted: str) -> str | None:
    """Path of a module's source, found without importing it or its parent packages (``None``: unknown)."""
    top, *rest = dotted.split(".")
    spec = importlib.util.find_spec(top)
    for i, part in enumerate(rest):
        locations = spec.submodule_search_locations if spec else None
        if not locations:
            return None
        spec = PathFinder.find_spec(part, list(locations))
        if spec is None:
            return None
        if i == len(rest) - 1:
            break
    return spec.origin if spec and isinstance(spec.origin, str) and spec.origin.endswith(".py") else None


def static_help(ep: EntryPoint) -> str | None:
    """The ``HELP`` string of a command module, read from its source (no import), or ``None``."""
    path = _module_file(ep.module)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None
    target: ast.expr
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "HELP" and isinstance(value, ast.Constant) \
                and isinstance(value.value, str):
            return value.value
    return None


def _extra_requirements(extra: str) -> list[str]:
    """Distribution names the extra needs (following ``rft-sdk[other]`` references), unconditional ones only."""
    try:
        lines = requires(_DIST) or []
    except PackageNotFoundError:
        return []
    names: list[str] = []
    for line in lines:
        req, _, marker = line.partition(";")
        marker = " ".join(marker.split())
        if marker not in (f'extra == "{extra}"', f"extra == '{extra}'"):
            continue
        name = re.match(r"[A-Za-z0-9_.-]+", req.strip())
        if name is None:
            continue
        inner = re.match(r"rft[-_]sdk\[([^\]]+)\]", req.strip())
        if inner:
            for other in inner.group(1).split(","):
                names += _extra_requirements(other.strip())
        else:
            names.append(name.group(0))
    return names


def missing_extra(command: str) -> str | None:
    """The extra ``command`` needs when some of its distributions are not installed, else ``None``."""
    extra = COMMAND_EXTRAS.get(command)
    if extra is None:
        return None
    for name in _extra_requirements(extra):
        try:
            distribution(name)
        except PackageNotFoundError:
            return extra
    return None


def declared_extras() -> list[str]:
    """The extras the installed ``rft-sdk`` declares (``Provides-Extra``)."""
    try:
        return list(metadata(_DIST).get_all("Provides-Extra") or [])
    except PackageNotFoundError:
        return []


def load_command(ep: EntryPoint) -> ModuleType | str:
    """Import a declared command module, or say why it is unavailable and what to install."""
    try:
        module = ep.load()
    except ImportError as exc:
        extra = COMMAND_EXTRAS.get(ep.name)
        if extra is not None:
            return f"unavailable ({exc}); install it with: pip install \"rft-sdk[{extra}]\""
        return f"unavailable ({exc}); install the package that provides {ep.value!r}"
    if not all(hasattr(module, attr) for attr in ("HELP", "add_arguments", "run")):
        return f"unavailable: {ep.value} does not define HELP, add_arguments and run"
    return module  # type: ignore[no-any-return]


def _options(parser: argparse.ArgumentParser) -> list[str]:
    found: list[str] = []
    for action in parser._actions:  # argparse keeps no public list of option strings
        found += [o for o in action.option_strings if o.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found += _options(child)
    return found


def subparser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser:
    """The sub-command's parser (for its usage line in errors), else ``parser``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            child: argparse.ArgumentParser = action.choices[command]
            return child
    return parser


def close_option(unknown: Iterable[str], parser: argparse.ArgumentParser) -> str:
    """``" (did you mean --x?)"`` for the first unknown ``--option`` close to one of ``parser``'s, else ``""``."""
    options = _options(parser)
    for word in unknown:
        if word.startswith("--"):
            near = difflib.get_close_matches(word.split("=", 1)[0], options, n=1, cutoff=0.6)
            if near:
                return f" (did you mean {near[0]}?)"
    return ""


def share_arg(value: str) -> float:
    """An argparse ``type`` for a share from 0 to 1 (``--max-discard-share``).

    Raises:
        argparse.ArgumentTypeError: not a number, or outside [0, 1] (argparse exits 2 naming the option).
    """
    try:
        share = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {value!r}") from None
    if not 0.0 <= share <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {value}")
    return share


def env_secret(var: str | None) -> str | None:
    """The value of environment variable ``var`` (a ``--token-env VAR`` option), ``None`` without ``var``.

    Raises:
        ValueError: ``var`` is unset or empty (a token silently missing would get 401 on every call).
    """
    if var is None:
        return None
    value = os.environ.get(var)
    if not value:
        raise ValueError(f"environment variable {var!r} is unset or empty")
    return value


def standalone_main(prog: str, help_text: str, add_arguments: Callable[[argparse.ArgumentParser], None],
                    run: Callable[[argparse.Namespace], int], argv: Sequence[str] | None) -> int:
    """A declared command run on its own (``python -m rft_sdk._commands.job ...``): parse ``argv`` with
    its ``add_arguments`` and ``run`` it; the exit status (``--help`` 0, usage errors 2)."""
    parser = argparse.ArgumentParser(prog=prog, description=help_text)
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    return run(args)

def load_app(target: str) -> Any:
    """Import ``"package.module:attr"`` with the cwd on ``sys.path``.

    Raises:
        ValueError: ``target`` is not ``MODULE:ATTR``.
        ImportError / AttributeError: the module or attribute does not exist.
    """
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"expected MODULE:ATTR (e.g. app:server), got {target!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class FactoryError(ValueError):
    """``MODULE:ATTR`` was loaded but is misused as a factory, or is a factory named without ``--factory``;
    the message is the whole reason with its fix (printed after the command's name, without "cannot load")."""


def factory_problem(target: str, factory: Any) -> str | None:
    """Why ``factory`` (what ``--factory MODULE:ATTR`` loaded) cannot be called with no arguments, or ``None``:
    it is not callable, or its signature has a required parameter."""
    if not callable(factory):
        return f"--factory: {target!r} is a {type(factory).__name__}, not a function returning the app"
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin without a signature: let the call decide
        return None
    required = [p.name for p in signature.parameters.values()
                if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if required:
        return (f"--factory: {target!r} needs the argument(s) {', '.join(required)}; a factory takes none "
                "(read what it needs from the environment, or give each choice a factory of its own)")
    return None


def bare_factory(target: str, app: Any) -> str | None:
    """Why ``app`` (loaded without ``--factory``) looks like a factory rather than an ASGI app, or ``None``:
    a plain function that takes no arguments (an ASGI app takes ``scope, receive, send``)."""
    if not inspect.isfunction(app):
        return None
    if any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
           for p in inspect.signature(app).parameters.values()):
        return None
    return (f"{target!r} is a function of no arguments, not an ASGI app: if it returns the app (a ToolServer), "
            "pass --factory")


def load_server(target: str, *, factory: bool = False) -> Any:
    """The app a command names by ``MODULE:ATTR``, as ``rft serve``, ``rft tools``, ``rft validate --app`` and
    ``rft job`` load it: :func:`load_app`, then with ``factory`` the attribute called once with no arguments
    (uvicorn's factory mode); without ``factory``, a function of no arguments is refused with the fix.

    Raises:
        FactoryError: the factory needs arguments or is not callable, or a factory named without ``factory``.
        ValueError / ImportError / AttributeError: as :func:`load_app`; and whatever the factory raises.
    """
    app = load_app(target)
    if factory:
        if problem := factory_problem(target, app):
            raise FactoryError(problem)
        return app()
    if problem := bare_factory(target, app):
        raise FactoryError(problem)
    return app
