// sandgrep.wasm under Node.js through jco, with only the workspace
// preopened. `npm run transpile` (or `jco transpile`) turns the component
// into gen/sandgrep.js first.
//
//   import { open } from './sandgrep.mjs';
//   const sg = await open('/path/to/repo');
//   sg.call('search-text', { query: 'fn main' });
//   // → { ok: {...} } or { err: { tag: 'outside-workspace', val: '../x' } }
//
// Requests and responses are plain objects with the WIT field names in
// snake_case, as the CLI's --json-page prints them; omitted fields take the
// component's defaults.

import { _setPreopens } from '@bytecodealliance/preview2-shim/filesystem';

// jco takes u64 values as BigInt.
const U64 = new Set(['max_filesize', 'offset_bytes', 'max_bytes', 'start_line', 'max_lines']);
const DEFAULTS = {
  'search-text': { query: '', word: false, multiline: false, paths: [], include_globs: [], exclude_globs: [],
    types: [], hidden: false, no_ignore: false, follow_symlinks: false, invert_match: false, count_matches: false,
    streaming: false, crlf: false, null_data: false, passthru: false, type_changes: [], stop_on_nonmatch: false,
    search_zip: false, mmap: false, binary_results: false },
  'search-ast': { pattern: '', paths: [], include_globs: [], exclude_globs: [], hidden: false, no_ignore: false,
    follow_symlinks: false },
  'list-files': { include_globs: [], exclude_globs: [], include_dirs: false, include_metadata: false,
    hidden: false, no_ignore: false, follow_symlinks: false, types: [], no_total: false, type_changes: [] },
  'read-file': { path: '' },
};
const FUNCTIONS = { 'search-text': ['search', 'searchText'], 'search-ast': ['search', 'searchAst'],
  'list-files': ['files', 'listFiles'], 'read-file': ['files', 'readFile'] };

const camel = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
const snake = (k) => k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());

// A returned value as JSON-ready data: snake_case keys, numbers, nulls.
function plain(v) {
  if (typeof v === 'bigint') return Number(v);
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.map(plain);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [snake(k), plain(x)]));
  }
  return v;
}

export async function open(workspace, module = './gen/sandgrep.js') {
  // Only the workspace: the shim would otherwise preopen the whole host
  // filesystem.
  _setPreopens({ '.': workspace });
  const sg = await import(module);
  const policy = { redact: true, extraDeny: [], insideGitRepository: false, cursorKey: '', disabledRedactionRules: [] };
  return {
    call(op, request) {
      const [iface, fn] = FUNCTIONS[op];
      const full = { ...DEFAULTS[op], ...request };
      const args = Object.fromEntries(
        Object.entries(full).map(([k, v]) => [camel(k), v === null ? undefined : U64.has(k) ? BigInt(v) : v]));
      try {
        return { ok: plain(sg[iface][fn](args, policy)) };
      } catch (e) {
        if (e && e.payload && e.payload.tag) return { err: { tag: e.payload.tag, val: plain(e.payload.val) } };
        throw e;
      }
    },
  };
}
