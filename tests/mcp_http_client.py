"""Drives `sandgrep serve`'s /mcp with the official MCP Python SDK over
streamable HTTP: each tenant's token sees its own workspace only; a wrong
token is refused.

Usage: python mcp_http_client.py URL ALPHA_TOKEN BETA_TOKEN (the tree of
tests/serve.rs). Exits non-zero on the first failed check.
"""

import asyncio
import json
import sys
import urllib.error
import urllib.request

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

URL, ALPHA, BETA = sys.argv[1], sys.argv[2], sys.argv[3]


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


async def as_tenant(token, word, other):
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with client, streamable_http_client(URL, http_client=client) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            tools = {t.name for t in (await s.list_tools()).tools}
            assert tools == {"search_text", "search_ast", "list_files", "read_file"}, tools
            r = await s.call_tool("search_text", {"query": "shared"})
            hits = r.structured_content["hits"]
            assert len(hits) == 7 and all(other not in h["line_text"] for h in hits), hits
            assert any(word in h["line_text"] for h in hits), hits
            r = await s.call_tool("read_file", {"path": "../" + other})
            assert r.is_error and "outside the workspace" in text_of(r), text_of(r)
            r = await s.call_tool("search_ast", {"pattern": "shared($X)"})
            assert len(r.structured_content["matches"]) == 6, r.structured_content


async def main():
    await as_tenant(ALPHA, "apple", "banana")
    await as_tenant(BETA, "banana", "apple")
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).encode()
    req = urllib.request.Request(URL, data=body, headers={"Authorization": "Bearer nope-nope-nope-nope",
                                                         "Content-Type": "application/json"})
    try:
        urllib.request.urlopen(req)
        raise AssertionError("a wrong token got in")
    except urllib.error.HTTPError as e:
        assert e.code == 401, e.code
    print("ok")


asyncio.run(main())
