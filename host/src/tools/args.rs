//! The arguments of one call: aliases folded into the canonical names, and
//! values read by type, with errors that name the argument.

use serde_json::{Map, Value};

use super::ToolError;

/// The arguments of one call, read by canonical name (aliases folded in),
/// with type errors that name the argument.
pub(super) struct Args {
    map: Map<String, Value>,
}

const ALIASES: &[(&str, &str)] = &[
    ("pattern", "query"),
    ("regex", "query"),
    ("directory", "root"),
    ("dir", "root"),
    ("include", "include_globs"),
    ("file", "path"),
    ("file_path", "path"),
];

impl Args {
    /// Folds `args` into the names of `known` (the tool's arguments).
    pub(super) fn new(args: &Map<String, Value>, known: &[&str], tool: &str) -> Result<Args, ToolError> {
        let mut map = Map::new();
        for (k, v) in args {
            let mut name = ALIASES.iter().find(|(alias, _)| alias == k).map_or(k.as_str(), |(_, canon)| canon);
            // search_ast's own argument is `pattern` (`query` and `regex` mean it too).
            if tool == "search_ast" && matches!(k.as_str(), "pattern" | "query" | "regex") {
                name = "pattern";
            }
            if k == "lang" {
                name = "language";
            }
            // `path` names the directory to search or list (as grep tools do).
            if name == "path" && tool != "read_file" {
                name = "root";
            }
            if !known.contains(&name) {
                return Err(ToolError::Arguments(format!(
                    "unknown argument {k:?} for {tool}; the arguments are {known:?}"
                )));
            }
            if v.is_null() {
                continue;
            }
            if map.insert(name.to_string(), v.clone()).is_some() {
                return Err(ToolError::Arguments(format!("{name} is given twice (under an alias)")));
            }
        }
        Ok(Args { map })
    }

    fn bad(name: &str, want: &str, v: &Value) -> ToolError {
        ToolError::Arguments(format!("{name} must be {want}, not {v}"))
    }

    pub(super) fn string(&mut self, name: &str) -> Result<Option<String>, ToolError> {
        match self.map.remove(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(Self::bad(name, "a string", &v)),
        }
    }

    pub(super) fn strings(&mut self, name: &str) -> Result<Vec<String>, ToolError> {
        match self.map.remove(name) {
            None => Ok(Vec::new()),
            Some(Value::String(s)) => Ok(vec![s]),
            Some(Value::Array(items)) => items
                .into_iter()
                .map(|v| match v {
                    Value::String(s) => Ok(s),
                    v => Err(Self::bad(name, "a list of strings", &v)),
                })
                .collect(),
            Some(v) => Err(Self::bad(name, "a list of strings", &v)),
        }
    }

    pub(super) fn bool(&mut self, name: &str) -> Result<Option<bool>, ToolError> {
        match self.map.remove(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(b)),
            Some(Value::String(s)) if s == "true" || s == "false" => Ok(Some(s == "true")),
            Some(v) => Err(Self::bad(name, "true or false", &v)),
        }
    }

    /// A non-negative integer; numbers past the range saturate (the guest
    /// clamps them to the contract's maximum, with a warning).
    pub(super) fn u64(&mut self, name: &str) -> Result<Option<u64>, ToolError> {
        match self.map.remove(name) {
            None => Ok(None),
            Some(v) => {
                let n = match &v {
                    Value::Number(n) => {
                        n.as_u64().or_else(|| n.as_f64().filter(|f| *f >= 0.0 && f.fract() == 0.0).map(|f| f as u64))
                    }
                    Value::String(s) => s.parse::<u64>().ok(),
                    _ => None,
                };
                n.map(Some).ok_or_else(|| Self::bad(name, "a non-negative integer", &v))
            }
        }
    }

    pub(super) fn u32(&mut self, name: &str) -> Result<Option<u32>, ToolError> {
        Ok(self.u64(name)?.map(|n| n.min(u32::MAX.into()) as u32))
    }

    pub(super) fn choice<T: Copy>(&mut self, name: &str, options: &[(&str, T)]) -> Result<Option<T>, ToolError> {
        match self.string(name)? {
            None => Ok(None),
            Some(s) => {
                options.iter().find(|(k, _)| k.eq_ignore_ascii_case(&s)).map(|(_, v)| Some(*v)).ok_or_else(|| {
                    let names: Vec<&str> = options.iter().map(|(k, _)| *k).collect();
                    ToolError::Arguments(format!("{name} must be one of {names:?}, not {s:?}"))
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const SEARCH: &[&str] = &["query", "root", "include_globs", "max_results", "case_sensitive", "mode"];

    fn args(tool: &str, known: &[&str], v: Value) -> Result<Args, ToolError> {
        let Value::Object(map) = v else { panic!("arguments are an object") };
        Args::new(&map, known, tool)
    }

    fn message(r: Result<impl Sized, ToolError>) -> String {
        match r {
            Err(ToolError::Arguments(m)) => m,
            Err(e) => panic!("not an argument error: {e}"),
            Ok(_) => panic!("accepted"),
        }
    }

    #[test]
    fn aliases_fold_into_canonical_names() {
        let mut a = args("search_text", SEARCH, json!({"pattern": "x", "dir": "src", "include": "*.rs"})).unwrap();
        assert_eq!(a.string("query").unwrap().as_deref(), Some("x"));
        assert_eq!(a.string("root").unwrap().as_deref(), Some("src"));
        assert_eq!(a.strings("include_globs").unwrap(), ["*.rs"]);
    }

    #[test]
    fn path_is_the_root_except_for_read_file() {
        let mut a = args("list_files", &["root"], json!({"path": "src"})).unwrap();
        assert_eq!(a.string("root").unwrap().as_deref(), Some("src"));
        let mut a = args("read_file", &["path"], json!({"file_path": "a.rs"})).unwrap();
        assert_eq!(a.string("path").unwrap().as_deref(), Some("a.rs"));
    }

    #[test]
    fn search_ast_reads_query_and_lang_as_its_own_names() {
        let mut a = args("search_ast", &["pattern", "language"], json!({"query": "$X", "lang": "rust"})).unwrap();
        assert_eq!(a.string("pattern").unwrap().as_deref(), Some("$X"));
        assert_eq!(a.string("language").unwrap().as_deref(), Some("rust"));
    }

    #[test]
    fn unknown_and_doubled_arguments_are_refused() {
        let m = message(args("search_text", SEARCH, json!({"query": "x", "qeury": "y"})));
        assert!(m.starts_with("unknown argument \"qeury\" for search_text; the arguments are [\"query\""), "{m}");
        let m = message(args("search_text", SEARCH, json!({"query": "x", "regex": "y"})));
        assert_eq!(m, "query is given twice (under an alias)");
    }

    #[test]
    fn null_is_absent() {
        let mut a = args("search_text", SEARCH, json!({"query": "x", "root": null})).unwrap();
        assert_eq!(a.string("root").unwrap(), None);
    }

    #[test]
    fn values_by_type() {
        let v = json!({"query": "x", "max_results": 7.0, "case_sensitive": "true", "include_globs": ["a", "b"]});
        let mut a = args("search_text", SEARCH, v).unwrap();
        assert_eq!(a.u32("max_results").unwrap(), Some(7));
        assert_eq!(a.bool("case_sensitive").unwrap(), Some(true));
        assert_eq!(a.strings("include_globs").unwrap(), ["a", "b"]);
        assert_eq!(a.u32("max_results").unwrap(), None, "a value is read once");

        let mut a = args("search_text", SEARCH, json!({"max_results": "12", "mode": "REGEX"})).unwrap();
        assert_eq!(a.u64("max_results").unwrap(), Some(12));
        assert_eq!(a.choice("mode", &[("literal", 0), ("regex", 1)]).unwrap(), Some(1));
    }

    #[test]
    fn numbers_past_the_range_saturate() {
        let mut a = args("search_text", SEARCH, json!({"max_results": 1e30})).unwrap();
        assert_eq!(a.u64("max_results").unwrap(), Some(u64::MAX));
        let mut a = args("search_text", SEARCH, json!({"max_results": 5_000_000_000u64})).unwrap();
        assert_eq!(a.u32("max_results").unwrap(), Some(u32::MAX));
    }

    #[test]
    fn wrong_types_name_the_argument() {
        for (v, want) in [
            (json!({"max_results": -1}), "max_results must be a non-negative integer, not -1"),
            (json!({"max_results": 1.5}), "max_results must be a non-negative integer, not 1.5"),
            (json!({"case_sensitive": 1}), "case_sensitive must be true or false, not 1"),
            (json!({"query": 3}), "query must be a string, not 3"),
            (json!({"include_globs": [1]}), "include_globs must be a list of strings, not 1"),
        ] {
            let mut a = args("search_text", SEARCH, v).unwrap();
            let got = match want.split(' ').next().unwrap() {
                "max_results" => message(a.u64("max_results")),
                "case_sensitive" => message(a.bool("case_sensitive")),
                "query" => message(a.string("query")),
                _ => message(a.strings("include_globs")),
            };
            assert_eq!(got, want);
        }
        let mut a = args("search_text", SEARCH, json!({"mode": "glob"})).unwrap();
        let m = message(a.choice("mode", &[("literal", 0), ("regex", 1)]));
        assert_eq!(m, "mode must be one of [\"literal\", \"regex\"], not \"glob\"");
    }
}
