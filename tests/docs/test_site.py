"""The README is a front door into the documentation site: at most 300 lines, and every page it links
to exists and is in the site's navigation (``mkdocs.yml``), so ``mkdocs build --strict`` builds it."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _nav_pages(node: object) -> set[str]:
    if isinstance(node, str):
        return {node}
    if isinstance(node, list):
        return set().union(*(_nav_pages(n) for n in node)) if node else set()
    if isinstance(node, dict):
        return set().union(*(_nav_pages(v) for v in node.values())) if node else set()
    return set()


def _config() -> dict:
    # mkdocs.yml may hold python/name tags of plugins; none are used here, so safe_load reads it.
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))


def test_readme_is_a_front_door() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move details to docs/"


def test_every_docs_link_of_the_readme_is_a_page_of_the_site() -> None:
    nav = _nav_pages(_config()["nav"])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {m.split("#")[0] for m in re.findall(r"\]\(docs/([^)]+)\)", readme)}
    assert linked, "the README links no documentation page"
    for page in sorted(linked):
        assert (ROOT / "docs" / page).is_file(), f"README links docs/{page}, which does not exist"
        assert page in nav, f"docs/{page} is linked from the README but not in mkdocs.yml's nav"


def test_every_page_of_the_nav_exists_and_every_page_is_in_the_nav() -> None:
    nav = _nav_pages(_config()["nav"])
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert not nav - pages, f"nav names pages that do not exist: {sorted(nav - pages)}"
    assert not pages - nav, f"pages missing from mkdocs.yml's nav: {sorted(pages - nav)}"
