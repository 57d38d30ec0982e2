from __future__ import annotations

import pytest

from tests.actions.mcp_server import mcp_test_server


@pytest.fixture(scope="session")
def mcp_server_running():
    """One real MCP server (tests/actions/mcp_server.py) for the whole session; it requires the bearer TOKEN."""
    with mcp_test_server() as server:
        yield server


@pytest.fixture
def mcp_server(mcp_server_running):
    """The session's MCP server with its counters cleared: ``.url``, ``.calls``, ``.metas``, ``.keys``,
    ``.requests``, ``.refused``, ``.notes``, ``.reset()``."""
    mcp_server_running.reset()
    return mcp_server_running
