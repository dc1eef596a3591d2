"""A long-lived `sandgrep mcp` answers from its index and kept instance, yet
every change made before a call is in that call's answer (SPEC §6).

Usage: python mcp_fresh.py SANDGREP_BINARY WORKSPACE
Each answer (paths and lines of the hits) is compared with a scan by the
CLI (`--no-index`), and once the index serves, every page (results, cursor,
stats) with the CLI's one indexed instance. Exits non-zero on the first
difference.
"""

import asyncio
import json
import os
import subprocess
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BIN, ROOT = sys.argv[1], sys.argv[2]
QUERIES = ["needle", "fresh_word", "zqxj_nothing", "hay"]


def scanned(query):
    out = subprocess.run([BIN, "--root", ROOT, "--no-index", "search", "--json-page", "-i", "-F", "-m", "5000",
                          "--max-results", "5000", query], capture_output=True, stdin=subprocess.DEVNULL)
    return sorted((m["path"], m["line"]) for m in json.loads(out.stdout)["matches"])


def listed_by_cli():
    out = subprocess.run([BIN, "--root", ROOT, "ls", "--json", "--max-results", "5000"], capture_output=True,
                         stdin=subprocess.DEVNULL)
    return [e["path"] for e in json.loads(out.stdout)["entries"]]


async def answer(s, query):
    r = await s.call_tool("search_text", {"query": query, "context_lines": 0, "max_results": 5000})
    assert not r.is_error, r
    sc = r.structured_content
    return sorted((h["path"], h["line"]) for h in sc["hits"]), sc["stats"]


async def check(s, what):
    for q in QUERIES:
        got, stats = await answer(s, q)
        want = scanned(q)
        assert got == want, f"{what}: {q!r}: indexed {got} != scanned {want} ({stats})"
    r = await s.call_tool("list_files", {"max_results": 5000})
    assert not r.is_error, r
    got, want = [e["path"] for e in r.structured_content["entries"]], listed_by_cli()
    assert got == want, f"{what}: list_files {got} != ls {want}"


def cli_page(query, mode, n, cursor):
    """One page by the CLI: indexed, one instance."""
    args = [BIN, "--root", ROOT, "-j", "1", "search", "--json-page", "-i", "-F", "--max-results", str(n)]
    args += {"content": [], "count": ["-c"], "files_with_matches": ["-l"]}[mode]
    args += ["--cursor", cursor] if cursor else []
    out = subprocess.run(args + [query], capture_output=True, stdin=subprocess.DEVNULL)
    v = json.loads(out.stdout)
    return [(m["path"], m["line"]) for m in v["matches"]], v["files"], v["next_cursor"], v["stats"]


async def same_pages(s, what):
    """Every page of the server's answers (its instances share a served
    call) is the page the CLI's one instance gives: results, cursor, stats."""
    for q in QUERIES:
        for mode, n in [("content", 1), ("content", 2), ("count", 1), ("files_with_matches", 2)]:
            cursor = None
            for _ in range(50):
                args = {"query": q, "context_lines": 0, "max_results": n, "output_mode": mode}
                r = await s.call_tool("search_text", dict(args, cursor=cursor) if cursor else args)
                assert not r.is_error, r
                sc = r.structured_content
                got = ([(h["path"], h["line"]) for h in sc["hits"]], sc.get("files") or [], sc["next_cursor"],
                       dict(sc["stats"], elapsed_ms=0))
                want = cli_page(q, mode, n, cursor)
                want = want[:3] + (dict(want[3], elapsed_ms=0),)
                assert got == want, f"{what}: {q!r} {mode} {n} after {cursor}: served {got} != CLI {want}"
                cursor = sc["next_cursor"]
                if not cursor:
                    break


def server_descriptors():
    """The open descriptors of the server process (Linux)."""
    want = [BIN, "--root", ROOT, "mcp"]
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().split(b"\0")[:-1] == [a.encode() for a in want]:
                    return len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            continue
    raise AssertionError("the server process was not found")


async def kept_walks_hold_no_directories(s):
    """Walks kept for later calls (one per set of walk options) hold no
    directory open: a long-lived server would run out of descriptors and
    miss files (the tree has 300 directories, and 60 in a row)."""
    variants = [{}, {"hidden": True}, {"no_ignore": True}, {"include_globs": ["*.txt"]}, {"root": "dirs"},
                {"hidden": True, "no_ignore": True}, {"exclude_globs": ["*.md"]}]
    for v in variants:
        for _ in range(2):
            r = await s.call_tool("search_text", dict({"query": "needle", "context_lines": 0, "max_results": 5000}, **v))
            assert not r.is_error and r.structured_content["stats"]["skipped"]["unreadable"] == 0, r
        r = await s.call_tool("list_files", dict({"max_results": 5000, "include_metadata": True}, **v))
        assert not r.is_error, r
        assert all(e.get("size") is not None for e in r.structured_content["entries"] if not e["is_dir"]), v
    # (Each kept helper instance, one per core, holds a few.)
    n = server_descriptors()
    assert n < 60 + 4 * (os.cpu_count() or 1), f"the server holds {n} descriptors"


def write(rel, text):
    path = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


async def main():
    params = StdioServerParameters(command=BIN, args=["--root", ROOT, "mcp"], env=dict(os.environ))
    async with stdio_client(params) as (read, write_):
        async with ClientSession(read, write_) as s:
            await s.initialize()
            # The index is built in the background; calls scan meanwhile. The
            # tree was written just before: the first build distrusts every
            # file, a second one (past the racy window) trusts them, and then
            # `needle` leaves src/a.txt, the 200 fillers, 5 binary files and
            # 301 more unread.
            deadline = time.time() + 60
            while True:
                _, stats = await answer(s, "needle")
                if stats["index"] == "served" and stats["files_skipped_by_index"] == 507:
                    break
                assert time.time() < deadline, f"the index never served a call: {stats}"
                await asyncio.sleep(0.5)
            await check(s, "indexed")
            await check(s, "again")
            await same_pages(s, "indexed")
            await kept_walks_hold_no_directories(s)
            # Each change right before a call, with no pause.
            write("src/new.txt", "a fresh_word and a needle\n")
            await check(s, "new file")
            path = os.path.join(ROOT, "src/a.txt")  # "hay hay hay hay hay hay\n"
            st = os.stat(path)
            with open(path, "r+") as f:
                text = f.read()
                f.seek(0)
                f.write("zqxj_nothing needle hay\n")
                assert len(text) == 24, text
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
            write("src/b.txt", open(os.path.join(ROOT, "src/b.txt")).read().replace("needle", "fresh_word"))
            await check(s, "rewritten in place, times put back")
            os.remove(os.path.join(ROOT, "src/c.txt"))
            await check(s, "deleted")
            os.rename(os.path.join(ROOT, "deep/d.txt"), os.path.join(ROOT, "deep/e.txt"))
            await check(s, "renamed")
            write(".ignore", "deep/\n")
            await check(s, "new ignore file")
            os.makedirs(os.path.join(ROOT, "made/below"))
            write("made/below/f.txt", "needle in a new directory\n")
            await check(s, "new directory")
            # Directories moved within the workspace and into it: what is
            # made below them later is watched too (checked after the refresh).
            os.rename(os.path.join(ROOT, "made"), os.path.join(ROOT, "moved"))
            os.makedirs(os.path.join(ROOT, "moved/below/later"))
            await check(s, "directory renamed")
            outside = ROOT.rstrip("/") + "-outside"
            os.makedirs(os.path.join(outside, "sub"))
            os.rename(outside, os.path.join(ROOT, "came"))
            await check(s, "directory moved in")
            # Quiet again: refreshed, and served from the index once more.
            await asyncio.sleep(4)
            await check(s, "refreshed")
            _, stats = await answer(s, "fresh_word")
            assert stats["index"] == "served" and stats["files_skipped_by_index"] > 0, stats
            write("moved/below/later/g.txt", "a needle below a renamed directory\n")
            await check(s, "written below a renamed directory")
            write("came/sub/h.txt", "a needle below a directory moved in\n")
            await check(s, "written below a directory moved in")
            # A branch switch: thousands of files changed at once, indexed
            # before; the very next call's answer is exact.
            for i in range(2500):
                write(f"branch/m{i % 25}/f{i}.txt", f"hay {i}\n" + ("needle\n" if i % 7 == 0 else ""))
            await asyncio.sleep(4)
            await check(s, "a branch's files indexed")
            for i in range(2500):
                rel = f"branch/m{i % 25}/f{i}.txt"
                if i % 10 == 1:
                    os.rename(os.path.join(ROOT, rel), os.path.join(ROOT, f"branch/m{i % 25}/renamed{i}.txt"))
                elif i % 25 == 2:
                    os.remove(os.path.join(ROOT, rel))
                elif i % 3 != 0:
                    write(rel, f"fresh_word {i}\n" + ("needle\n" if i % 5 == 0 else ""))
            for i in range(100):
                write(f"branch/new/n{i}.txt", "a needle on the new branch\n")
            await check(s, "right after a branch switch")
            await asyncio.sleep(4)
            await check(s, "after a branch switch, refreshed")
    print("MCP FRESHNESS CHECKS PASSED")


asyncio.run(main())
