"""Every Python example of the README and of the docs site runs as shown (the rules are in ``_docs``)."""

from __future__ import annotations

import ast
import inspect
import os
import re
from pathlib import Path

import anyio
import anyio.to_thread
import pytest

from _docs import ROOT, Block, page_blocks, pages

PAGES = [page for page in pages() if page_blocks(page)]


def run_program(block: Block, namespace: dict[str, object]) -> None:
    exec(compile(block.source, str(block.page), "exec"), namespace)


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
async def test_the_examples_of_each_page_run_in_order(page: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A page's blocks share one namespace; programs run in a worker thread; fragments only compile."""
    namespace: dict[str, object] = {"__name__": "docs_example"}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        for block in page_blocks(page):
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            code = compile(block.source, str(page), "exec", flags=flags)
            if block.fragment:
                continue
            with anyio.fail_after(120):
                if block.program:
                    await anyio.to_thread.run_sync(run_program, block, namespace)
                    continue
                outcome = eval(code, namespace)
                if inspect.iscoroutine(outcome):
                    await outcome
    finally:
        os.chdir(cwd)


def test_the_docs_site_has_examples_and_few_fragments() -> None:
    """Fragments (compiled, not run) stay the exception: each needs something no page can give."""
    blocks = [block for page in pages() for block in page_blocks(page)]
    fragments = [block.name for block in blocks if block.fragment]
    assert len(blocks) >= 30
    assert len(fragments) <= 5, fragments


PUBLIC_MODULES = {
    "toolmesh",
    "toolmesh.mcp",
    "toolmesh.hooks",
    "toolmesh.policy",
    "toolmesh.gateway",
    "toolmesh.providers",
    "toolmesh.providers.openai",
    "toolmesh.providers.openai_responses",
    "toolmesh.providers.anthropic",
    "toolmesh.providers.gemini",
    "toolmesh.bridges.openai_agents",
    "toolmesh.bridges.langchain",
    "toolmesh.bridges.pydantic_ai",
}


def test_the_api_pages_document_the_public_modules_only() -> None:
    """mkdocstrings pages name public modules, never an implementation module that may move."""
    documented = {
        match.group(1)
        for page in pages()
        for match in re.finditer(r"^::: ([\w.]+)", page.read_text(encoding="utf-8"), flags=re.M)
    }
    assert documented == PUBLIC_MODULES
