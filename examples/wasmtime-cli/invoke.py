"""sandgrep.wasm under the wasmtime CLI: `wasmtime run --dir WORKSPACE::.
--invoke 'search-text({...}, {...})' sandgrep.wasm`, one process per call,
with the arguments and the answer in WAVE (the component-value text format).

    python invoke.py WASMTIME WASM WORKSPACE REQUESTS.json

runs a list of {"op", "request"} (WIT field names in snake_case, as the CLI's
--json-page prints them; absent fields take the component's defaults) and prints
the results as one JSON list of {"ok": ...} / {"err": {"tag", "val"}}. WAVE
leaves out record fields whose option is none; they come back as null.
"""

import json
import subprocess
import sys

# Each request record's fields, in WIT order, and their kinds.
FIELDS = {
    "search-text": [("query", "str"), ("mode", "opt-enum"), ("case", "opt-enum"), ("word", "bool"),
                    ("multiline", "bool"), ("paths", "strs"), ("include_globs", "strs"), ("exclude_globs", "strs"),
                    ("types", "strs"), ("hidden", "bool"), ("no_ignore", "bool"), ("follow_symlinks", "bool"),
                    ("max_depth", "opt"), ("context_before", "opt"), ("context_after", "opt"), ("output", "opt-enum"),
                    ("max_results", "opt"), ("max_matches_per_file", "opt"), ("max_columns", "opt"),
                    ("max_filesize", "opt"), ("timeout_ms", "opt"), ("cursor", "opt"), ("skip", "opt"),
                    ("invert_match", "bool"), ("count_matches", "bool"), ("replace", "opt"), ("streaming", "bool"),
                    ("binary", "opt-enum"), ("crlf", "bool"), ("null_data", "bool"), ("encoding", "opt"),
                    ("passthru", "bool"), ("ignore", "opt"), ("type_changes", "strs"), ("stop_on_nonmatch", "bool"), ("engine", "opt-enum"), ("search_zip", "bool"), ("mmap", "bool"), ("binary_results", "bool")],
    "search-ast": [("pattern", "str"), ("language", "opt"), ("paths", "strs"), ("include_globs", "strs"),
                   ("exclude_globs", "strs"), ("hidden", "bool"), ("no_ignore", "bool"), ("follow_symlinks", "bool"),
                   ("max_results", "opt"), ("max_filesize", "opt"), ("timeout_ms", "opt"), ("cursor", "opt"),
                   ("skip", "opt")],
    "list-files": [("root", "opt"), ("recursive", "opt"), ("include_globs", "strs"), ("exclude_globs", "strs"),
                   ("include_dirs", "bool"), ("include_metadata", "bool"), ("hidden", "bool"), ("no_ignore", "bool"),
                   ("follow_symlinks", "bool"), ("types", "strs"), ("max_depth", "opt"), ("max_results", "opt"),
                   ("skip", "opt"), ("cursor", "opt"), ("no_total", "bool"), ("ignore", "opt"),
                   ("type_changes", "strs"), ("max_filesize", "opt")],
    "read-file": [("path", "str"), ("range_type", "opt-enum"), ("offset_bytes", "opt"), ("max_bytes", "opt"),
                  ("start_line", "opt"), ("max_lines", "opt")],
}
POLICY = '{redact: true, extra-deny: [], inside-git-repository: false, cursor-key: "", disabled-redaction-rules: []}'


def wave(v):
    """A JSON value (string, number, bool, list) in WAVE."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return '"' + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{{{ord(c):x}}}" for c in v) + '"'
    if isinstance(v, list):
        return "[" + ", ".join(wave(x) for x in v) + "]"
    raise ValueError(v)


def call_expr(op, request):
    unknown = set(request) - {name for name, _ in FIELDS[op]}
    if unknown:
        raise ValueError(f"unknown fields for {op}: {sorted(unknown)}")
    parts = []
    for name, kind in FIELDS[op]:
        v = request.get(name)
        if kind == "str":
            text = wave(v or "")
        elif kind == "bool":
            text = wave(bool(v))
        elif kind == "strs":
            text = wave(v or [])
        elif v is None:
            text = "none"
        else:
            text = f"some({v if kind == 'opt-enum' else wave(v)})"
        parts.append(f"{name.replace('_', '-')}: {text}")
    return f"{op}({{{', '.join(parts)}}}, {POLICY})"


class Wave:
    """A parser of the WAVE values the CLI prints, into JSON-ready data."""

    def __init__(self, text):
        self.s, self.i = text, 0

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] in " \n\t\r":
            self.i += 1

    def peek(self):
        self.ws()
        return self.s[self.i] if self.i < len(self.s) else ""

    def eat(self, c):
        assert self.peek() == c, (c, self.s[self.i:self.i + 40])
        self.i += 1

    def label(self):
        self.ws()
        j = self.i
        while self.i < len(self.s) and (self.s[self.i].isalnum() or self.s[self.i] in "-%"):
            self.i += 1
        return self.s[j:self.i]

    def string(self):
        self.eat('"')
        out = []
        while self.s[self.i] != '"':
            c = self.s[self.i]
            if c == "\\":
                n = self.s[self.i + 1]
                if n == "u":
                    end = self.s.index("}", self.i)
                    out.append(chr(int(self.s[self.i + 3:end], 16)))
                    self.i = end + 1
                    continue
                out.append({"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "'": "'"}[n])
                self.i += 2
                continue
            out.append(c)
            self.i += 1
        self.i += 1
        return "".join(out)

    def value(self):
        c = self.peek()
        if c == '"':
            return self.string()
        if c == "[":
            self.eat("[")
            items = []
            while self.peek() != "]":
                items.append(self.value())
                if self.peek() == ",":
                    self.eat(",")
            self.eat("]")
            return items
        if c == "{":
            self.eat("{")
            rec = {}
            while self.peek() != "}":
                key = self.label().lstrip("%")
                self.eat(":")
                rec[key.replace("-", "_")] = self.value()
                if self.peek() == ",":
                    self.eat(",")
            self.eat("}")
            return rec
        if c == "-" or c.isdigit():
            j = self.i
            self.i += 1
            while self.i < len(self.s) and (self.s[self.i].isdigit() or self.s[self.i] in ".e"):
                self.i += 1
            text = self.s[j:self.i]
            return float(text) if "." in text else int(text)
        name = self.label()
        if name.startswith("%"):
            # A label that is a WAVE keyword, escaped (wasmtime 49 prints the
            # enum case `none` as `%none`): a name, never the keyword.
            escaped = name[1:]
            if self.peek() == "(":
                self.eat("(")
                payload = self.value()
                self.eat(")")
                return {"__case": escaped, "val": payload}
            return escaped
        if name in ("true", "false"):
            return name == "true"
        if name == "none":
            return None
        if self.peek() == "(":
            self.eat("(")
            payload = self.value()
            self.eat(")")
            if name == "some":
                return payload
            return {"__case": name, "val": payload}
        return name  # an enum value, or a case without payload


def run(wasmtime, wasm, workspace, op, request):
    out = subprocess.run([wasmtime, "run", "--dir", f"{workspace}::.", "--invoke", call_expr(op, request), wasm],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    result = Wave(out.stdout.strip()).value()
    if result["__case"] == "ok":
        return {"ok": result["val"]}
    err = result["val"]
    return {"err": {"tag": err["__case"], "val": err["val"]}}


if __name__ == "__main__":
    wasmtime, wasm, workspace, requests = sys.argv[1:5]
    with open(requests) as f:
        print(json.dumps([run(wasmtime, wasm, workspace, r["op"], r["request"]) for r in json.load(f)]))
