"""Three `sandgrep serve` nodes behind the real nginx on loopback, configured
by deploy/nginx/sandgrep.conf (its nodes, ports, certificate and log paths
filled in), under a bounded mixed load: `/v1` calls from several clients
per tenant (two tokens each) and one MCP session per tenant through the
official MCP SDK. Mid-load one node is stopped with SIGTERM (it drains and
exits), then the node holding the most tenants is killed with SIGKILL.

Checked: no `/v1` call is lost (each is answered 200, retried by the proxy,
or by the client on a 502 as docs/deploy.md says) and every answer is the
one a single node gives (the reference node, not behind the proxy; `stats`
aside: it says how a node found the answer, e.g. its index's state); a
cursor from a node that is gone continues on another; each tenant's calls
land on one node while it lives (each node's /metrics); an MCP session that
died with its node gets 404 from the next node, the SDK's "Session
terminated", and a new session succeeds; MCP answers are a single node's
too; a Sandgrep-Tenant header that is not the token's tenant is refused;
TLS, the redirect and /metrics at the proxy; no token in the proxy's log.

Usage: cluster.py SANDGREP NGINX (tests/cluster.rs runs it with .venv's
Python). scripts/bench-cluster imports the set-up from here. Everything
is bounded: calls per client are capped and every wait has a deadline.
"""

import grp
import hashlib
import http.client
import json
import os
import pwd
import random
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(REPO, "deploy", "nginx", "sandgrep.conf")
ADMIN = "admin-token-cluster-0123456789"
TENANTS = [f"t{i}" for i in range(6)]


def tokens(tenant):
    """Two tokens per tenant: the first in `tokens`, the second by its hash."""
    return [f"{tenant}-token-a-0123456789", f"{tenant}-token-b-0123456789"]


def make_workspace(path, tenant, files=30):
    for j in range(files):
        d = os.path.join(path, f"pkg{j % 3}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{j}.py"), "w") as f:
            f.write(f"def f{j}(x):\n    return shared('{tenant}-{j}', x)\n\n\n"
                    f"def g{j}():\n    # needle of {tenant}, {j}\n    return f{j}({j * 7 % 11})\n")


def write_config(work, drain_ms=500, stop_timeout_ms=3000, tenants=TENANTS, files=30):
    """Workspaces and one config for every node (`listen` port 0: each node
    says where it listens)."""
    lines = ['listen = "127.0.0.1:0"', f'admin_token = "{ADMIN}"', f"drain_ms = {drain_ms}",
             f"stop_timeout_ms = {stop_timeout_ms}", ""]
    for t in tenants:
        ws = os.path.join(work, "ws", t)
        make_workspace(ws, t, files)
        a, b = tokens(t)
        lines += ["[[tenant]]", f'name = "{t}"', f'workspace = "{ws}"', f'tokens = ["{a}"]',
                  f'token_sha256 = ["{hashlib.sha256(b.encode()).hexdigest()}"]',
                  "max_concurrent = 16", "requests_per_second = 10000", ""]
    path = os.path.join(work, "sandgrep.toml")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return path


class Node:
    """One `sandgrep serve` with its own cache directory."""

    def __init__(self, sandgrep, config, work, name):
        self.name = name
        cache = os.path.join(work, "cache", name)
        os.makedirs(cache, mode=0o700)
        env = dict(os.environ, SANDGREP_CACHE_DIR=cache)
        self.proc = subprocess.Popen([sandgrep, "serve", "--config", config], env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        first = self.proc.stderr.readline()
        try:
            event = json.loads(first)
        except ValueError:
            raise AssertionError(f"node {name} did not start: {first!r}")
        assert event.get("event") == "listening", first
        self.addr = event["addr"]
        self.events = []
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.proc.stderr:
            if '"event":"call"' not in line:
                self.events.append(line.strip())

    def alive(self):
        return self.proc.poll() is None

    def calls(self):
        """Calls this node counted, by tenant (its /metrics)."""
        status, _, body = Http(self.addr).request("GET", "/metrics", {"Authorization": f"Bearer {ADMIN}"})
        assert status == 200, (status, body)
        out = {}
        for line in body.decode().splitlines():
            m = re.match(r'sandgrep_calls_total\{tenant="([^"]+)",[^}]*\} (\d+)$', line)
            if m:
                out[m[1]] = out.get(m[1], 0) + int(m[2])
        return out

    def stop(self):
        if self.alive():
            self.proc.kill()
        self.proc.wait()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nginx_config(work, nodes, ports):
    """deploy/nginx/sandgrep.conf with this run's nodes, ports (a plain HTTP
    listener beside TLS in the same server block, so the load runs through
    the very locations shipped), certificate and log, in a main config that
    keeps every path in `work`."""
    text = open(TEMPLATE).read()
    subs = [
        # Every `server HOST:7878 …` line of the upstream: this run's nodes.
        (r"(?m)^([ \t]*)server \S+:7878( [^;\n]*);\n(?:[ \t]*server \S+:7878[^;\n]*;\n)*",
         lambda m: "".join(f"{m[1]}server {n.addr}{m[2]};\n" for n in nodes)),
        (r"listen 80;", f"listen 127.0.0.1:{ports['redirect']};"),
        (r"\n\s*listen \[::\]:80;", ""),
        (r"listen 443 ssl;", f"listen 127.0.0.1:{ports['tls']} ssl;\n    listen 127.0.0.1:{ports['plain']};"),
        (r"\n\s*listen \[::\]:443 ssl;", ""),
        (r"ssl_certificate\s+\S+;", f"ssl_certificate {work}/tls.crt;"),
        (r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {work}/tls.key;"),
        (r"access_log /var/log/nginx/sandgrep.access.log", f"access_log {work}/access.log"),
    ]
    for pattern, repl in subs:
        text, n = re.subn(pattern, repl, text)
        assert n == 1, f"deploy/nginx/sandgrep.conf no longer has what the test fills in: {pattern}"
    with open(os.path.join(work, "sandgrep.conf"), "w") as f:
        f.write(text)
    user = ""
    if os.geteuid() == 0:
        # As root nginx would run its workers as nobody, who cannot enter
        # `work`: run them as the current user.
        user = f"user {pwd.getpwuid(os.geteuid()).pw_name} {grp.getgrgid(os.getegid()).gr_name};\n"
    main = f"""{user}worker_processes 2;
daemon off;
pid {work}/nginx.pid;
error_log {work}/error.log notice;
events {{ worker_connections 1024; }}
http {{
    access_log {work}/access-other.log;
    client_body_temp_path {work}/tmp/body;
    proxy_temp_path {work}/tmp/proxy;
    fastcgi_temp_path {work}/tmp/fastcgi;
    uwsgi_temp_path {work}/tmp/uwsgi;
    scgi_temp_path {work}/tmp/scgi;
    include {work}/sandgrep.conf;
}}
"""
    os.makedirs(os.path.join(work, "tmp"), exist_ok=True)
    path = os.path.join(work, "nginx.conf")
    with open(path, "w") as f:
        f.write(main)
    return path


class Nginx:
    def __init__(self, nginx, work, nodes):
        os.makedirs(work, exist_ok=True)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", f"{work}/tls.key", "-out", f"{work}/tls.crt"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for attempt in range(3):
            self.ports = {k: free_port() for k in ("plain", "tls", "redirect")}
            conf = nginx_config(work, nodes, self.ports)
            self.log = os.path.join(work, "access.log")
            self.proc = subprocess.Popen([nginx, "-p", work, "-c", conf, "-e", f"{work}/error.log"],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            deadline = time.time() + 30
            while time.time() < deadline and self.proc.poll() is None:
                try:
                    if Http(self.addr).request("GET", "/healthz", {})[0] == 200:
                        return
                except OSError:
                    pass
                time.sleep(0.1)
            self.stop()
            errors = open(f"{work}/error.log").read() if os.path.exists(f"{work}/error.log") else ""
            if "Address already in use" not in errors:
                break
        raise AssertionError(f"nginx did not start:\n{errors}")

    @property
    def addr(self):
        return f"127.0.0.1:{self.ports['plain']}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait()


class Http:
    """One kept-alive HTTP/1.1 connection, opened again when the server
    closed it between two requests."""

    def __init__(self, addr, context=None):
        self.host, port = addr.rsplit(":", 1)
        self.port = int(port)
        self.context = context
        self.conn = None

    def request(self, method, path, headers, body=None):
        for attempt in range(2):
            reused = self.conn is not None
            if not reused:
                if self.context:
                    self.conn = http.client.HTTPSConnection(self.host, self.port, timeout=120, context=self.context)
                else:
                    self.conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
            try:
                self.conn.request(method, path, body=body, headers=headers)
                r = self.conn.getresponse()
                data = r.read()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if reused and attempt == 0:
                    continue  # closed while idle: any client opens a new connection
                raise
            if r.getheader("connection", "").lower() == "close":
                self.close()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, data

    def close(self):
        if self.conn:
            self.conn.close()
        self.conn = None


def v1_headers(tenant, token):
    return {"Authorization": f"Bearer {token}", "Sandgrep-Tenant": tenant, "Content-Type": "application/json"}


def answer(body):
    """An answer as a client compares it: `stats` says how the node found
    it (time, files read, its index's state), not what it is."""
    v = json.loads(body)
    v.pop("stats", None)
    return v


V1_WORK = [
    ("search-text", {"query": "needle"}),
    ("search-text", {"query": "def [fg]1[0-9]", "mode": "regex", "context_lines": 1}),
    ("search-text", {"query": "return", "output_mode": "count"}),
    ("list-files", {"include_globs": ["pkg1/**"]}),
    ("read-file", {"path": "pkg2/f5.py", "start_line": 2, "max_lines": 4}),
    ("search-ast", {"pattern": "shared($$$A)"}),
]
PAGED = ("search-text", {"query": "shared", "max_results": 7})

MCP_WORK = [
    ("search_text", {"query": "needle"}),
    ("list_files", {"include_globs": ["pkg0/**"]}),
    ("read_file", {"path": "pkg1/f4.py"}),
    ("search_ast", {"pattern": "shared($$$A)"}),
]


def pages(client, tenant, token, op, args):
    """A paged search's pages (status 200 each), cursor after cursor."""
    out, cursor = [], None
    while True:
        a = dict(args, cursor=cursor) if cursor else args
        status, _, body = client.request("POST", f"/v1/{op}", v1_headers(tenant, token), json.dumps(a).encode())
        assert status == 200, (status, body)
        out.append(answer(body))
        cursor = out[-1].get("next_cursor")
        if not cursor:
            return out


def expected_answers(ref):
    """Every call's answer from the reference node (one node, no proxy)."""
    client = Http(ref.addr)
    exp = {}
    for t in TENANTS:
        for i, (op, args) in enumerate(V1_WORK):
            status, _, body = client.request("POST", f"/v1/{op}", v1_headers(t, tokens(t)[0]), json.dumps(args).encode())
            assert status == 200, (t, op, status, body)
            exp[(t, i)] = answer(body)
        exp[(t, "paged")] = pages(client, t, tokens(t)[0], *PAGED)
        assert len(exp[(t, "paged")]) >= 3, exp[(t, "paged")]
    return exp


class Load:
    """The bounded load: `clients` threads per tenant sending `/v1` calls
    until told to stop (or `cap` calls each), and (with `mcp`) one MCP
    session per tenant."""

    def __init__(self, addr, expected, clients=2, cap=5000, mcp_url=None, mcp_ref_url=None):
        self.addr, self.expected, self.cap = addr, expected, cap
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.v1_ok = {t: 0 for t in TENANTS}
        self.v1_lost = []
        self.mismatches = []
        self.client_retries = 0
        self.latencies = []  # (tenant, start, end) of each answered call
        self.threads = [threading.Thread(target=self.v1_client, args=(t, c), daemon=True)
                        for t in TENANTS for c in range(clients)]
        self.mcp = {t: {"ok": 0, "sessions": 0, "errors": [], "saw_404": False} for t in TENANTS}
        self.mcp_ready = threading.Event()
        self.mcp_failure = None
        if mcp_url:
            self.threads.append(threading.Thread(target=self.mcp_main, args=(mcp_url, mcp_ref_url), daemon=True))

    def start(self):
        for th in self.threads:
            th.start()

    def finish(self):
        self.stop.set()
        for th in self.threads:
            th.join(120)
            assert not th.is_alive(), "a load client did not finish"

    def call(self, client, tenant, token, op, args):
        """One `/v1` call; on a 502 (no node answered, or an answer was cut
        off) or a broken connection to the proxy, the client retries, as
        docs/deploy.md tells clients to."""
        body = json.dumps(args).encode()
        for attempt in range(8):
            started = time.perf_counter()
            try:
                status, _, data = client.request("POST", f"/v1/{op}", v1_headers(tenant, token), body)
            except OSError:
                client.close()
                status, data = None, b""
            if status in (None, 502):
                with self.lock:
                    self.client_retries += 1
                time.sleep(0.2)
                continue
            with self.lock:
                self.latencies.append((tenant, started, time.perf_counter()))
            return status, data
        return status, data

    def v1_client(self, tenant, c):
        rnd = random.Random(f"{tenant}-{c}")
        client = Http(self.addr)
        for n in range(self.cap):
            if self.stop.is_set():
                break
            token = tokens(tenant)[n % 2]
            pick = rnd.randrange(len(V1_WORK) + 1)
            if pick < len(V1_WORK):
                steps = [(V1_WORK[pick], self.expected[(tenant, pick)])]
            else:
                steps = [(PAGED, page) for page in self.expected[(tenant, "paged")]]
            cursor = None
            for k, ((op, args), want) in enumerate(steps):
                a = dict(args, cursor=cursor) if cursor else args
                status, data = self.call(client, tenant, token, op, a)
                if status != 200:
                    with self.lock:
                        self.v1_lost.append((tenant, op, status, data[:200]))
                    break
                got = answer(data)
                if got != want:
                    with self.lock:
                        self.mismatches.append((tenant, op, k, got, want))
                    break
                cursor = got.get("next_cursor")
                with self.lock:
                    self.v1_ok[tenant] += 1

    def mcp_main(self, url, ref_url):
        import anyio
        try:
            anyio.run(self.mcp_sessions, url, ref_url)
        except BaseException as e:  # noqa: B902: reported by the main thread
            self.mcp_failure = repr(e)
            self.mcp_ready.set()

    async def mcp_sessions(self, url, ref_url):
        import anyio
        expected = {}
        async with anyio.create_task_group() as tg:
            for t in TENANTS:
                tg.start_soon(self.mcp_expected, ref_url, t, expected)
        self.mcp_ready.set()
        async with anyio.create_task_group() as tg:
            for t in TENANTS:
                tg.start_soon(self.mcp_session_loop, url, t, expected[t])

    @staticmethod
    def mcp_answer(result):
        assert not result.is_error, result
        v = dict(result.structured_content)
        v.pop("stats", None)
        return v

    async def mcp_expected(self, ref_url, tenant, expected):
        import anyio
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client
        headers = {"Authorization": f"Bearer {tokens(tenant)[0]}", "Sandgrep-Tenant": tenant}
        with anyio.fail_after(60):
            async with create_mcp_http_client(headers=headers) as client, \
                    streamable_http_client(ref_url, http_client=client) as (read, write), \
                    ClientSession(read, write) as s:
                await s.initialize()
                expected[tenant] = [self.mcp_answer(await s.call_tool(n, a)) for n, a in MCP_WORK]

    async def mcp_session_loop(self, url, tenant, expected):
        """One session at a time: calls until stopped; a failed call is
        tried again in the same session, and when the session is unknown
        (404: its node is gone) in a new one."""
        import contextlib

        import anyio
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client
        from mcp.shared.exceptions import MCPError
        rnd = random.Random(tenant)
        state = self.mcp[tenant]
        redo = None
        n = 0
        while not self.stop.is_set():
            token = tokens(tenant)[n % 2]
            n += 1
            headers = {"Authorization": f"Bearer {token}", "Sandgrep-Tenant": tenant}
            try:
                async with contextlib.AsyncExitStack() as stack:
                    client = await stack.enter_async_context(create_mcp_http_client(headers=headers))
                    read, write = await stack.enter_async_context(streamable_http_client(url, http_client=client))
                    s = await stack.enter_async_context(ClientSession(read, write))
                    with anyio.fail_after(60):
                        await s.initialize()
                    state["sessions"] += 1
                    failed = 0
                    while not self.stop.is_set() and state["ok"] < self.cap:
                        i = redo if redo is not None else rnd.randrange(len(MCP_WORK))
                        name, args = MCP_WORK[i]
                        try:
                            with anyio.fail_after(60):
                                result = await s.call_tool(name, args)
                        except MCPError as e:
                            state["errors"].append(f"{e.code}: {e.message}")
                            redo = i
                            if e.message == "Session terminated":
                                state["saw_404"] = True
                                break
                            failed += 1
                            if failed > 3:
                                break
                            continue
                        redo, failed = None, 0
                        got = self.mcp_answer(result)
                        if got != expected[i]:
                            self.mismatches.append((tenant, "mcp " + name, 0, got, expected[i]))
                        state["ok"] += 1
                        await anyio.sleep(0.01)
            except Exception as e:  # a session that could not open or close: start again
                state["errors"].append(f"session: {e!r}"[:300])
                await anyio.sleep(0.2)


def wait_until(what, check, timeout=120):
    deadline = time.time() + timeout
    while not check():
        assert time.time() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def homes(nodes, before, after):
    """Which live node each tenant's calls went to between two /metrics
    snapshots: {tenant: [node names whose count grew]}."""
    out = {t: [] for t in TENANTS}
    for n in nodes:
        if n.name in after:
            for t in TENANTS:
                if after[n.name].get(t, 0) > before.get(n.name, {}).get(t, 0):
                    out[t].append(n.name)
    return out


def snapshot(nodes):
    return {n.name: n.calls() for n in nodes if n.alive()}


def raw_mcp(addr, tenant, session, message):
    """One raw MCP POST through the proxy (Connection: close): its status
    and headers."""
    headers = dict(v1_headers(tenant, tokens(tenant)[0]), Accept="application/json, text/event-stream",
                   Connection="close")
    if session:
        headers["Mcp-Session-Id"] = session
    status, h, _ = Http(addr).request("POST", "/mcp", headers, json.dumps(message).encode())
    return status, h


def open_raw_session(addr, tenant):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}}
    status, h = raw_mcp(addr, tenant, None, init)
    assert status == 200 and "mcp-session-id" in h, (status, h)
    session = h["mcp-session-id"]
    status, _ = raw_mcp(addr, tenant, session, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert status == 202, status
    status, _ = raw_mcp(addr, tenant, session, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert status == 200, status
    return session


def main():
    sandgrep, nginx_bin = sys.argv[1], sys.argv[2]
    assert shutil.which("openssl"), "openssl is not installed: run scripts/test"
    work = tempfile.mkdtemp(prefix="sandgrep-cluster-")
    nodes, ref, proxy, load = [], None, None, None
    failures = []

    def check(ok, message):
        if not ok:
            failures.append(message)
        print(("ok   " if ok else "FAIL ") + message, flush=True)

    try:
        config = write_config(work)
        ref = Node(sandgrep, config, work, "reference")
        nodes = [Node(sandgrep, config, work, f"node{i}") for i in range(3)]
        proxy = Nginx(nginx_bin, work, nodes)
        by_addr = {n.addr: n.name for n in nodes}
        print(f"nodes: {', '.join(f'{n.name} {n.addr}' for n in nodes)}; nginx {proxy.addr}", flush=True)
        expected = expected_answers(ref)

        # The proxy's own answers.
        client = Http(proxy.addr)
        status, _, _ = client.request("POST", "/v1/search-text", v1_headers("t1", tokens("t0")[0]), b'{"query":"x"}')
        check(status == 400, f"a Sandgrep-Tenant header naming another tenant is refused (400): {status}")
        check(client.request("GET", "/metrics", {"Authorization": f"Bearer {ADMIN}"})[0] == 404,
              "the proxy does not pass /metrics on")
        status, h, _ = Http(f"127.0.0.1:{proxy.ports['redirect']}").request("GET", "/v1/x", {})
        check(status == 308 and h.get("location", "").startswith("https://"), f"plain HTTP is redirected: {status}")
        tls = ssl.create_default_context(cafile=f"{work}/tls.crt")
        status, _, body = Http(f"127.0.0.1:{proxy.ports['tls']}", tls).request(
            "POST", "/v1/search-text", v1_headers("t2", tokens("t2")[1]), json.dumps(V1_WORK[0][1]).encode())
        check(status == 200 and answer(body) == expected[("t2", 0)], f"a call over TLS: {status}")

        mcp_url = f"http://{proxy.addr}/mcp"
        load = Load(proxy.addr, expected, clients=2, mcp_url=mcp_url, mcp_ref_url=f"http://{ref.addr}/mcp")
        s0 = snapshot(nodes)
        load.start()
        wait_until("MCP sessions' expected answers", load.mcp_ready.is_set)
        assert load.mcp_failure is None, load.mcp_failure

        def progress(v1=20, mcp=3):
            base_v1, base_mcp = dict(load.v1_ok), {t: load.mcp[t]["ok"] for t in TENANTS}
            wait_until(f"{v1} more /v1 and {mcp} more MCP calls per tenant",
                       lambda: load.mcp_failure is None
                       and all(load.v1_ok[t] >= base_v1[t] + v1 and load.mcp[t]["ok"] >= base_mcp[t] + mcp
                               for t in TENANTS))
            assert load.mcp_failure is None, load.mcp_failure

        # 1. All three nodes up: each tenant on one node.
        progress()
        s1 = snapshot(nodes)
        home1 = homes(nodes, s0, s1)
        print(f"while all live: {home1}", flush=True)
        check(all(len(v) == 1 for v in home1.values()), "each tenant's calls land on one node")
        home1 = {t: v[0] for t, v in home1.items()}

        # 2. SIGTERM to the node holding the most tenants, mid-load; a page
        # of its tenant's search asked before, the next one after.
        counts = {n.name: sum(1 for t in TENANTS if home1[t] == n.name) for n in nodes}
        x = max(nodes, key=lambda n: counts[n.name])
        tx = next(t for t in TENANTS if home1[t] == x.name)
        page1 = pages(Http(proxy.addr), tx, tokens(tx)[0], *PAGED)[0]
        check(page1 == expected[(tx, "paged")][0], "the first page from the node about to stop")
        raw_x = open_raw_session(proxy.addr, tx)
        x.proc.terminate()
        asked = time.perf_counter()
        print(f"SIGTERM {x.name} (tenants {[t for t in TENANTS if home1[t] == x.name]})", flush=True)
        try:
            code = x.proc.wait(60)
        except subprocess.TimeoutExpired:
            code = None
        print(f"{x.name} exited {time.perf_counter() - asked:.1f} s after SIGTERM (drain_ms 500, stop_timeout_ms "
              f"3000): {[e for e in x.events if 'stop' in e]}", flush=True)
        check(code == 0, f"{x.name} drained and exited by itself, status 0: {code}")
        check(any('"signal":"SIGTERM"' in e for e in x.events), f"{x.name} logged its stop")
        status, _, body = Http(proxy.addr).request(
            "POST", "/v1/search-text", v1_headers(tx, tokens(tx)[1]),
            json.dumps(dict(PAGED[1], cursor=page1["next_cursor"])).encode())
        check(status == 200 and answer(body) == expected[(tx, "paged")][1],
              f"{x.name}'s cursor continues on another node: {status}")
        status, _ = raw_mcp(proxy.addr, tx, raw_x, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        check(status == 404, f"an MCP session of {x.name} is unknown (404) on the next node: {status}")

        progress()
        s2 = snapshot(nodes)
        home2 = homes(nodes, s1, s2)
        print(f"after {x.name} stopped: {home2}", flush=True)
        check(all(len(v) == 1 for v in home2.values()), "each tenant's calls land on one live node")
        check(all(home2[t] == [home1[t]] for t in TENANTS if home1[t] != x.name),
              "the other nodes' tenants stay where they were")
        home2 = {t: v[0] for t, v in home2.items()}

        # 3. SIGKILL to the live node holding the most tenants, mid-load.
        live = [n for n in nodes if n.alive()]
        counts = {n.name: sum(1 for t in TENANTS if home2[t] == n.name) for n in live}
        y = max(live, key=lambda n: counts[n.name])
        ty = next(t for t in TENANTS if home2[t] == y.name)
        raw_y = open_raw_session(proxy.addr, ty)
        page1 = pages(Http(proxy.addr), ty, tokens(ty)[0], *PAGED)[0]
        before = dict(load.v1_ok)
        wait_until("calls after the session opened", lambda: all(load.v1_ok[t] > before[t] for t in TENANTS))
        y.proc.kill()
        killed_at = time.perf_counter()
        y.proc.wait()
        print(f"SIGKILL {y.name} (tenants {[t for t in TENANTS if home2[t] == y.name]})", flush=True)
        status, _, body = Http(proxy.addr).request(
            "POST", "/v1/search-text", v1_headers(ty, tokens(ty)[0]),
            json.dumps(dict(PAGED[1], cursor=page1["next_cursor"])).encode())
        check(status == 200 and answer(body) == expected[(ty, "paged")][1],
              f"{y.name}'s cursor continues on another node: {status}")
        status, _ = raw_mcp(proxy.addr, ty, raw_y, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        check(status == 404, f"an MCP session of {y.name} is unknown (404) on the next node: {status}")
        progress(mcp=2)
        s3 = snapshot(nodes)
        home3 = homes(nodes, s2, s3)
        z = next(n for n in nodes if n.alive())
        check(all(v == [z.name] for v in home3.values()), f"every tenant now on {z.name}: {home3}")
        load.finish()

        # Every call answered, as one node answers.
        total = sum(load.v1_ok.values())
        check(not load.v1_lost, f"no /v1 call lost: {total} answered, lost {load.v1_lost[:5]}")
        check(not load.mismatches, f"every answer is the reference node's: {load.mismatches[:2]}")
        moved = {t for t in TENANTS if home1[t] == x.name or home2[t] == y.name}
        for t in TENANTS:
            m = load.mcp[t]
            print(f"MCP {t}: {m['ok']} calls, {m['sessions']} sessions, errors {m['errors']}", flush=True)
            if t in moved:
                check(m["saw_404"] and m["sessions"] >= 2,
                      f"{t}'s MCP session died with its node: 404 (Session terminated), then a new session")
            else:
                check(not m["errors"] and m["sessions"] == 1, f"{t}'s MCP session, on a node that lived, "
                      "saw no error")
        late = [e - killed_at for t, s, e in load.latencies if t in moved and s < killed_at < e]
        log = open(proxy.log).read()
        retried = [line for line in log.splitlines() if re.search(r'upstream="[^"]*, ', line)]
        check(all(tok not in log for t in TENANTS for tok in tokens(t)), "no token in the proxy's log")
        print(f"/v1 calls answered: {total}; retried by the proxy on another node: {len(retried)}; "
              f"by the client (502): {load.client_retries}; calls of moved tenants in flight at the "
              f"SIGKILL: {len(late)}", flush=True)
        for line in retried[:6]:
            print("  " + re.sub(r"127\.0\.0\.1:\d+", lambda m: by_addr.get(m[0], m[0]), line), flush=True)
    finally:
        if load:
            load.stop.set()
        for n in nodes + ([ref] if ref else []):
            n.stop()
        if proxy:
            proxy.stop()
        if failures and os.environ.get("KEEP"):
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed", flush=True)
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
