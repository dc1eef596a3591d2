"""Drives `sandgrep mcp` with the official MCP Python SDK (a real client).

Usage: python mcp_client.py SANDGREP_BINARY WORKSPACE RUNAWAY_WASM
The workspace is prepared by tests/mcp.rs; RUNAWAY_WASM is the hostile test
build of the component (tests/runaway), whose search for "spin" never ends. Exits non-zero on the first
failed check, printing what differed.
"""

import asyncio
import json
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN, ROOT, RUNAWAY = sys.argv[1], sys.argv[2], sys.argv[3]


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


async def check_sdk():
    params = StdioServerParameters(command=BIN, args=["--root", ROOT, "mcp"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            assert init.server_info.name == "sandgrep", init.server_info
            assert init.capabilities.tools is not None
            assert "search_text" in init.instructions and "read_file" in init.instructions

            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert set(tools) == {"search_text", "search_ast", "list_files", "read_file"}, tools.keys()
            st = tools["search_text"].input_schema
            assert st["required"] == ["query"]
            assert st["properties"]["max_results"]["maximum"] == 5000
            assert st["properties"]["context_lines"]["default"] == 2
            for name in ["query", "mode", "case_sensitive", "root", "include_globs", "exclude_globs",
                         "max_results", "context_lines", "skip", "cursor", "output_mode", "word",
                         "multiline", "types", "max_depth", "max_matches_per_file", "hidden", "no_ignore"]:
                assert name in st["properties"], name
            for name in ["root", "recursive", "include_globs", "exclude_globs", "max_results",
                         "include_dirs", "include_metadata", "skip", "cursor", "hidden", "no_ignore", "types",
                         "max_depth"]:
                assert name in tools["list_files"].input_schema["properties"], name
            for name in ["path", "range_type", "offset_bytes", "max_bytes", "start_line", "max_lines"]:
                assert name in tools["read_file"].input_schema["properties"], name
            assert all(t.output_schema for t in tools.values())
            # Annotated as read-only and closed-world, so hosts can run them without asking.
            for t in tools.values():
                a = t.annotations
                assert a and (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint) == \
                    (True, False, True, False), (t.name, a)
                assert t.title and a.title == t.title, t
            assert "list_files" in tools["search_text"].description

            # search_text: defaults are literal and case-insensitive, 2 lines of context.
            r = await s.call_tool("search_text", {"query": "NEEDLE.X"})
            assert not r.is_error, text_of(r)
            hits = r.structured_content["hits"]
            assert [(h["path"], h["line"]) for h in hits] == [("src/a.rs", 3)], hits
            h = hits[0]
            assert h["line_text"] == "let needle.x = 1;" and h["column"] == 5, h
            assert h["context_before"] == ["one", "two"] and h["context_after"] == ["four", "five"], h
            assert r.structured_content["has_more"] is False
            # The text is rg's --heading form: the path once, `line:` hits, `line-` context.
            assert text_of(r).startswith("src/a.rs\n1-one\n2-two\n3:let needle.x = 1;\n4-four\n5-five\n"), text_of(r)

            # Aliases, regex mode, case sensitivity, globs.
            r = await s.call_tool("search_text", {"pattern": "needle\\.[xy]", "mode": "regex",
                                                  "case_sensitive": True, "directory": "src",
                                                  "include_globs": ["*.rs"], "context_lines": 0})
            assert [h["path"] for h in r.structured_content["hits"]] == ["src/a.rs", "src/b.rs"], text_of(r)
            r = await s.call_tool("search_text", {"regex": "NEEDLE", "case_sensitive": True})
            assert r.structured_content["hits"] == [] and "No matches found" in text_of(r), text_of(r)
            assert "regex" not in text_of(r), text_of(r)

            # A literal query that reads as a regex and finds nothing says how to run it as one.
            r = await s.call_tool("search_text", {"query": "needle.*y"})
            assert r.structured_content["hits"] == [] and 'mode: "regex"' in text_of(r), text_of(r)
            r = await s.call_tool("search_text", {"query": "needle.*y", "mode": "regex"})
            assert [h["path"] for h in r.structured_content["hits"]] == ["src/b.rs"], text_of(r)

            # Adjacent hits share their context: each line once.
            r = await s.call_tool("search_text", {"query": "line", "root": "notes.txt"})
            assert text_of(r).startswith("notes.txt\n1:line 1\n2:line 2\n3:line 3\n4:line 4\n5:key"), text_of(r)

            # Binary files skipped are counted in the stats, and named only when it matters.
            r = await s.call_tool("search_text", {"query": "needle"})
            assert r.structured_content["stats"]["skipped"]["binary"] == 1, r.structured_content
            assert "binary" not in text_of(r), text_of(r)
            r = await s.call_tool("search_text", {"query": "nothing-anywhere"})
            assert "1 binary file(s) skipped" in text_of(r), text_of(r)
            # "Not found" tells what was not searched, and which argument includes it.
            assert "1 entries left out by .gitignore/.ignore/.rgignore rules (no_ignore includes them)" in text_of(r), text_of(r)
            assert "hidden entries left out (hidden includes them)" in text_of(r), text_of(r)
            assert r.structured_content["stats"]["skipped"]["ignored"] == 1, r.structured_content
            r = await s.call_tool("search_text", {"query": "nothing-anywhere", "hidden": True})
            assert "withheld by the secrets denylist (no argument includes them)" in text_of(r), text_of(r)
            # A line shown with a secret redacted is counted, with its rule.
            r = await s.call_tool("search_text", {"query": "line 5"})
            assert "[REDACTED]" in text_of(r) and "1 line(s) shown with secrets [REDACTED] by rule: " in text_of(r), text_of(r)
            assert r.structured_content["stats"]["lines_redacted"] == 1, r.structured_content
            assert r.structured_content["hits"][0]["redactions"][0]["line"] == 5, r.structured_content
            r = await s.call_tool("search_text", {"query": "a", "root": "bin.dat"})
            assert "bin.dat: binary file, not searched" in text_of(r), text_of(r)

            # A search cut by its time limit says so, never "No matches found".
            r = await s.call_tool("search_text", {"query": "nothing-anywhere", "root": "big", "timeout_ms": 1})
            sc = r.structured_content
            assert sc["timed_out"] is True and sc["next_cursor"], sc
            assert "No matches found" not in text_of(r), text_of(r)
            assert "stopped at the time limit after searching" in text_of(r), text_of(r)
            assert f'continue with cursor "{sc["next_cursor"]}"' in text_of(r), text_of(r)
            r = await s.call_tool("search_ast", {"pattern": "nothing($X)", "root": "big/py", "timeout_ms": 1})
            assert r.structured_content["timed_out"] is True, r.structured_content
            assert "No matches found" not in text_of(r), text_of(r)
            assert "stopped at the time limit after searching" in text_of(r), text_of(r)

            # Paging with max_results and cursor, and with skip.
            r = await s.call_tool("search_text", {"query": "line", "max_results": 2, "context_lines": 0})
            first = r.structured_content
            assert first["has_more"] is True and first["next_cursor"], first
            assert f'more results past these 2: continue with cursor "{first["next_cursor"]}"' in text_of(r), text_of(r)
            assert "next-cursor" not in text_of(r) and len(first["next_cursor"]) < 40, first["next_cursor"]
            seen = [(h["path"], h["line"]) for h in first["hits"]]
            cursor = first["next_cursor"]
            while cursor:
                r = await s.call_tool("search_text", {"query": "line", "max_results": 2, "context_lines": 0,
                                                      "cursor": cursor})
                seen += [(h["path"], h["line"]) for h in r.structured_content["hits"]]
                cursor = r.structured_content["next_cursor"]
            r = await s.call_tool("search_text", {"query": "line", "max_results": 100, "context_lines": 0})
            assert seen == [(h["path"], h["line"]) for h in r.structured_content["hits"]], seen
            r = await s.call_tool("search_text", {"query": "line", "max_results": 2, "skip": 2, "context_lines": 0})
            assert [(h["path"], h["line"]) for h in r.structured_content["hits"]] == seen[2:4]

            # Other outputs.
            r = await s.call_tool("search_text", {"query": "line", "output_mode": "count"})
            assert r.structured_content["files"] == [{"path": "notes.txt", "count": 5}], r.structured_content

            # Invalid arguments and failures are tool errors with clear messages.
            for args, expect in [
                ({"query": "a(", "mode": "regex"}, "invalid pattern"),
                # The pattern as it was written, not as the matcher wraps it.
                ({"query": "a(", "mode": "regex", "word": True}, "unclosed group, at column 2 of the pattern"),
                ({}, "query is required"),
                ({"query": "x", "root": "../outside"}, "outside the workspace"),
                ({"query": "x", "root": "/etc"}, "outside the workspace"),
                ({"query": "x", "root": "nope"}, "nope: not found"),
                ({"query": "x", "max_results": -1}, "max_results must be a non-negative integer"),
                ({"query": "x", "mode": "fuzzy"}, "mode must be one of"),
                ({"query": "x", "bogus": 1}, "unknown argument \"bogus\""),
                ({"query": "x", "types": ["nosuchtype"]}, "unknown file type"),
                ({"query": "x", "root": ".env"}, "denied"),
            ]:
                r = await s.call_tool("search_text", args)
                assert r.is_error, (args, text_of(r))
                assert expect in text_of(r), (args, text_of(r))
                assert ROOT not in text_of(r), text_of(r)

            # search_ast: structure, meta-variables by name, errors.
            r = await s.call_tool("search_ast", {"pattern": "fn $F() { $$$B }", "lang": "rust"})
            m = r.structured_content["matches"]
            assert [(x["path"], x["line"]) for x in m] == [("src/b.rs", 1)], r.structured_content
            assert {v["name"]: v["text"] for v in m[0]["meta_variables"]}["F"] == "b", m[0]
            assert "src/b.rs:1:1:fn b()" in text_of(r), text_of(r)
            for args, expect in [({"pattern": "x", "language": "cobol"}, "unknown language"),
                                 ({"pattern": "$$$A", "language": "rust"}, "invalid pattern"),
                                 # Refused at once, in `$` syntax (ast-grep's stand-in is `µ`).
                                 ({"pattern": "$A; $B", "language": "rust"}, "pattern source `$A; $B`"),
                                 ({"pattern": "foo(", "language": "rust"}, "does not parse as rust"),
                                 # Every file there is Python, which the pattern is not.
                                 ({"pattern": "fn $F() {}", "root": "big/py"}, "does not parse as python"),
                                 ({"query": "x", "root": "../"}, "outside the workspace")]:
                r = await s.call_tool("search_ast", args)
                assert r.is_error and expect in text_of(r), (args, text_of(r))

            # list_files.
            r = await s.call_tool("list_files", {})
            entries = r.structured_content["entries"]
            assert [e["path"] for e in entries] == ["bin.dat", "notes.txt", "src/a.rs", "src/b.rs"], entries
            assert "size" not in entries[0], entries[0]
            assert r.structured_content["has_more"] is False
            r = await s.call_tool("list_files", {"dir": "src", "include_metadata": True, "include_dirs": True,
                                                 "recursive": False})
            e = r.structured_content["entries"]
            assert [x["path"] for x in e] == ["src/a.rs", "src/b.rs"] and e[0]["size"] > 0, e
            r = await s.call_tool("list_files", {"max_results": 1})
            assert r.structured_content["has_more"] is True and r.structured_content["next_cursor"]
            r2 = await s.call_tool("list_files", {"max_results": 1, "skip": 1})
            assert r2.structured_content["entries"][0]["path"] == "notes.txt"
            r = await s.call_tool("list_files", {"root": "../"})
            assert r.is_error and "outside the workspace" in text_of(r)
            # By type (or not), and by depth.
            r = await s.call_tool("list_files", {"types": ["rust"]})
            assert [e["path"] for e in r.structured_content["entries"]] == ["src/a.rs", "src/b.rs"], text_of(r)
            r = await s.call_tool("list_files", {"types": ["!rust"], "max_depth": 1})
            assert [e["path"] for e in r.structured_content["entries"]] == ["bin.dat", "notes.txt"], text_of(r)
            found = lambda r: [f["path"] for f in r.structured_content["files"]]
            r = await s.call_tool("search_text", {"query": "e", "output_mode": "files_with_matches"})
            assert "src/a.rs" in found(r) and "notes.txt" in found(r), text_of(r)
            r = await s.call_tool("search_text", {"query": "e", "max_depth": 1, "output_mode": "files_with_matches"})
            assert "src/a.rs" not in found(r) and "notes.txt" in found(r), text_of(r)

            # read_file: lines, bytes, inference, continuation, errors.
            r = await s.call_tool("read_file", {"path": "src/a.rs", "start_line": 2, "max_lines": 2})
            sc = r.structured_content
            assert sc["content"] == "two\nlet needle.x = 1;\n" and sc["is_truncated"] is True, sc
            assert sc["range"] == {"range_type": "lines", "offset_bytes": None, "max_bytes": None,
                                   "start_line": 2, "max_lines": 2}, sc["range"]
            assert sc["next_line"] == 4
            assert "     2\ttwo" in text_of(r) and "start_line=4" in text_of(r), text_of(r)
            r = await s.call_tool("read_file", {"path": "src/a.rs", "range_type": "bytes", "offset_bytes": 4,
                                                "max_bytes": 3})
            assert r.structured_content["content"] == "two", r.structured_content
            r = await s.call_tool("read_file", {"path": "src/a.rs"})
            assert r.structured_content["range"]["range_type"] == "bytes"
            assert r.structured_content["is_truncated"] is False
            for args, expect in [
                ({"path": "src/a.rs", "start_line": 1, "offset_bytes": 0}, "cannot be used with"),
                ({"path": "src"}, "is a directory"),
                ({"path": "missing.txt"}, "missing.txt: not found"),
                ({"path": "../x"}, "outside the workspace"),
                ({"path": "bin.dat"}, "binary file"),
                ({"path": ".env"}, "denied"),
                ({"path": "src/a.rs", "range_type": "pages"}, "range_type must be one of"),
            ]:
                r = await s.call_tool("read_file", args)
                assert r.is_error and expect in text_of(r), (args, text_of(r))

            # Secrets are redacted in every tool's text.
            r = await s.call_tool("read_file", {"path": "notes.txt"})
            assert "AKIAIOSFODNN7EXAMPLE" not in json.dumps(r.structured_content), r.structured_content
            r = await s.call_tool("search_text", {"query": "key"})
            assert "AKIAIOSFODNN7EXAMPLE" not in text_of(r) and "[REDACTED]" in text_of(r), text_of(r)

            # An unknown tool is a protocol error; the session goes on.
            try:
                await s.call_tool("delete_everything", {})
            except Exception as e:  # McpError
                assert "unknown tool" in str(e), e
            else:
                raise AssertionError("an unknown tool must be a protocol error")
            r = await s.call_tool("search_text", {"query": "needle"})
            assert not r.is_error


def raw_server():
    return subprocess.Popen([BIN, "--root", ROOT, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)


def send(p, obj):
    p.stdin.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
    p.stdin.flush()


def recv(p, want_id):
    while True:
        line = p.stdout.readline()
        assert line, "the server closed its output"
        msg = json.loads(line)
        if msg.get("id") == want_id:
            return msg


def initialize(p):
    send(p, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"}}})
    assert recv(p, 1)["result"]["serverInfo"]["name"] == "sandgrep"
    send(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})


def check_malformed_input():
    p = raw_server()
    initialize(p)
    for junk in ["this is {not json", '{"foo": "bar"}', '{"jsonrpc": "2.0", "id": 7, "method": "tools/call"}',
                 '{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": 5}}',
                 '{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "search_text", "arguments": [1]}}',
                 "[" * 10000]:
        send(p, junk)
    send(p, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "search_text", "arguments": {"query": "needle"}}})
    r = recv(p, 2)
    assert r["result"]["structuredContent"]["hits"], r
    p.stdin.close()
    assert p.wait(timeout=20) == 0


def check_disconnect_mid_call():
    p = raw_server()
    initialize(p)
    send(p, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "search_text", "arguments": {"query": "line", "root": "big"}}})
    p.stdin.close()  # the client goes away while the call runs
    start = time.time()
    p.wait(timeout=60)
    assert time.time() - start < 60


async def check_deadline():
    """A call the host has to stop is a tool error; the server goes on."""
    params = StdioServerParameters(command=BIN, args=["--root", ROOT, "--component", RUNAWAY, "mcp"])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            r = await s.call_tool("search_text", {"query": "spin", "timeout_ms": 100})
            assert r.is_error and "host deadline" in text_of(r), text_of(r)
            r = await s.call_tool("search_text", {"query": "alloc"})
            assert r.is_error and "out of memory" in text_of(r), text_of(r)
            r = await s.call_tool("search_text", {"query": "fine"})
            assert not r.is_error, text_of(r)


asyncio.run(check_sdk())
asyncio.run(check_deadline())
check_malformed_input()
check_disconnect_mid_call()
print("MCP CLIENT CHECKS PASSED")
