"""sandgrep.wasm under Python, with wasmtime-py's component API and only the
workspace preopened (read-only).

    from sandgrep_host import Sandgrep
    sg = Sandgrep("sandgrep.wasm", "/path/to/repo")
    sg.call("search-text", {"query": "fn main"})
    # → {"ok": {...}} or {"err": {"tag": "outside-workspace", "val": "../x"}}

Requests and responses are plain dicts with the WIT field names in
snake_case (as the CLI's --json-page prints them); omitted fields take the
component's defaults. `python sandgrep_host.py WASM WORKSPACE REQUESTS.json`
runs a list of {"op", "request"} and prints the results as one JSON list.
"""

import json
import sys

import wasmtime
from wasmtime import component as c

# Every field of each request record, with what "absent" means.
FIELDS = {
    "search-text": {
        "query": "", "mode": None, "case": None, "word": False, "multiline": False, "paths": [],
        "include_globs": [], "exclude_globs": [], "types": [], "hidden": False, "no_ignore": False,
        "follow_symlinks": False, "max_depth": None, "context_before": None, "context_after": None, "output": None,
        "max_results": None, "max_matches_per_file": None, "max_columns": None, "max_filesize": None,
        "timeout_ms": None, "cursor": None, "skip": None, "invert_match": False, "count_matches": False, "replace": None, "streaming": False,
        "binary": None, "crlf": False, "null_data": False, "encoding": None, "passthru": False,
        "ignore": None, "type_changes": [], "stop_on_nonmatch": False, "engine": None, "search_zip": False, "mmap": False, "binary_results": False,
    },
    "search-ast": {
        "pattern": "", "language": None, "paths": [], "include_globs": [], "exclude_globs": [], "hidden": False,
        "no_ignore": False, "follow_symlinks": False, "max_results": None, "max_filesize": None,
        "timeout_ms": None, "cursor": None, "skip": None,
    },
    "list-files": {
        "root": None, "recursive": None, "include_globs": [], "exclude_globs": [], "include_dirs": False,
        "include_metadata": False, "hidden": False, "no_ignore": False, "follow_symlinks": False,
        "types": [], "max_depth": None, "max_results": None, "skip": None, "cursor": None, "no_total": False,
        "ignore": None, "type_changes": [], "max_filesize": None,
    },
    "read-file": {
        "path": "", "range_type": None, "offset_bytes": None, "max_bytes": None, "start_line": None,
        "max_lines": None,
    },
}
INTERFACE = {"search-text": "search", "search-ast": "search", "list-files": "files", "read-file": "files"}


def record(fields):
    r = c.Record()
    for k, v in fields.items():
        setattr(r, k.replace("_", "-"), v)
    return r


def plain(v):
    """A lifted component value as JSON-ready data, field names in snake_case."""
    if isinstance(v, c.Record):
        return {k.replace("-", "_"): plain(x) for k, x in v.__dict__.items()}
    if isinstance(v, c.Variant):
        return {"tag": v.tag, "val": plain(v.payload)}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v


class Sandgrep:
    def __init__(self, wasm, workspace):
        self.engine = wasmtime.Engine()
        self.component = c.Component.from_file(self.engine, wasm)
        self.workspace = workspace

    def call(self, op, request):
        # A fresh store and instance per call, as the Rust host does.
        store = wasmtime.Store(self.engine)
        linker = c.Linker(self.engine)
        linker.add_wasip2()
        wasi = wasmtime.WasiConfig()
        wasi.preopen_dir(self.workspace, ".", False)  # the workspace only, read-only
        store.set_wasi(wasi)
        instance = linker.instantiate(store, self.component)
        iface = instance.get_export_index(store, f"sandgrep:search/{INTERFACE[op]}@0.6.0")
        func = instance.get_func(store, instance.get_export_index(store, op, iface))
        unknown = set(request) - set(FIELDS[op])
        if unknown:
            raise ValueError(f"unknown fields for {op}: {sorted(unknown)}")
        policy = record({"redact": True, "extra_deny": [], "inside_git_repository": False, "cursor_key": "",
                         "disabled_redaction_rules": []})
        out = func(store, record({**FIELDS[op], **request}), policy)
        # result<record, variant>: wasmtime-py gives the record for ok and
        # the error variant itself for err.
        if isinstance(out, c.Variant):
            return {"err": plain(out)}
        return {"ok": plain(out)}


if __name__ == "__main__":
    wasm, workspace, requests = sys.argv[1], sys.argv[2], sys.argv[3]
    sg = Sandgrep(wasm, workspace)
    with open(requests) as f:
        print(json.dumps([sg.call(r["op"], r["request"]) for r in json.load(f)]))
