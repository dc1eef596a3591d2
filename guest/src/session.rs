//! What an instance remembers between calls, for a host that keeps one
//! instance for many calls and watches the workspace (SPEC §6: a long-lived
//! host learns of changes from a watcher and hands them to the component).
//!
//! Before each call such a host says, through `unchanged-since`, either
//! `some(g)`: nothing in the workspace changed since its index refresh
//! number `g` (and that refresh's index is the one in the index directory),
//! or `none`. Under `some(g)` the instance keeps the index it loaded and the
//! walks it made, and the next call at the same `g` uses them instead of
//! reading the index and walking the tree again; the index's records stand
//! without a look at each file's times. A new `g`, or `none`, drops all of
//! it. A host that never calls `unchanged-since` (every other host, and a
//! fresh instance per call) gets the plain path: load, walk, check times.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::index::Loaded;
use crate::request::WalkOptions;
use crate::walk::{Reopen, Step};

/// Walks kept at once (one per distinct set of roots and walk options),
/// and their steps in all.
const LISTINGS: usize = 16;
const STEPS: usize = 1 << 20;

#[derive(Default)]
struct Kept {
    generation: Option<u64>,
    /// The index, by the policy it was loaded under.
    index: Option<(u64, Rc<Loaded>)>,
    listings: HashMap<String, KeptWalk>,
}

struct KeptWalk {
    steps: Rc<Vec<Step>>,
    /// How its entries' directories are found again.
    reopen: Rc<Reopen>,
    /// What the index says of each step ([`crate::index::Narrowing::marks`]).
    marks: Option<Rc<Vec<u32>>>,
}

thread_local! {
    static KEPT: RefCell<Kept> = RefCell::default();
}

/// What the host vouches for from now on (see the module's comment).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
pub fn unchanged_since(generation: Option<u64>) {
    KEPT.with_borrow_mut(|k| {
        if generation.is_none() || generation != k.generation {
            *k = Kept { generation, ..Kept::default() };
        }
    });
}

/// The generation the host vouches for, if any.
pub fn generation() -> Option<u64> {
    KEPT.with_borrow(|k| k.generation)
}

/// The index kept at this generation under `policy`.
pub fn index(policy: u64) -> Option<Rc<Loaded>> {
    KEPT.with_borrow(|k| k.index.as_ref().filter(|(p, _)| *p == policy).map(|(_, l)| l.clone()))
}

/// Keeps `loaded` for the calls at this generation (when there is one).
pub fn keep_index(policy: u64, loaded: Rc<Loaded>) -> Rc<Loaded> {
    KEPT.with_borrow_mut(|k| {
        if k.generation.is_some() {
            k.index = Some((policy, loaded.clone()));
        }
    });
    loaded
}

/// The key of the walk of `roots` with `options` under the index policy
/// `policy`: text search and listing share walks with the same key.
pub fn listing_key(roots: &[String], options: &WalkOptions, policy: u64) -> String {
    format!("{roots:?}\0{options:?}\0{policy}")
}

/// The walk kept at this generation under `key` ([`listing_key`]).
fn listing(key: &str) -> Option<(Rc<Vec<Step>>, Rc<Reopen>)> {
    KEPT.with_borrow(|k| k.listings.get(key).map(|w| (w.steps.clone(), w.reopen.clone())))
}

/// Whether a walk of `steps` steps would be kept.
pub fn may_keep(steps: usize) -> bool {
    steps <= STEPS
}

/// Whether a walk is kept at this generation under `key`.
pub fn has_listing(key: &str) -> bool {
    KEPT.with_borrow(|k| k.listings.contains_key(key))
}

/// Keeps a whole walk for the calls at this generation (when there is one):
/// whether it is kept.
pub fn keep_listing(key: String, steps: Vec<Step>, reopen: Rc<Reopen>) -> bool {
    KEPT.with_borrow_mut(|k| {
        if k.generation.is_none() || steps.len() > STEPS {
            return false;
        }
        let kept: usize = k.listings.values().map(|w| w.steps.len()).sum();
        if k.listings.len() >= LISTINGS || kept + steps.len() > STEPS {
            k.listings.clear();
        }
        k.listings.insert(key, KeptWalk { steps: Rc::new(steps), reopen, marks: None });
        true
    })
}

/// The walk of one call: the one kept at this generation under its key,
/// replayed, or a new one, recorded as it goes to be kept if it ends whole.
pub struct Replay {
    key: String,
    kept: Option<Rc<Vec<Step>>>,
    record: RefCell<Option<Vec<Step>>>,
    reopen: Option<Rc<Reopen>>,
}

impl Replay {
    /// The walk under `key` ([`listing_key`]); `whole` if it starts at the
    /// beginning (no cursor) and covers every file (not a shard). Only a
    /// walk whose entries `reopen` finds again is kept (see [`Reopen::for_walk`]).
    pub fn new(key: String, whole: bool, reopen: Option<Rc<Reopen>>) -> Replay {
        let whole = whole && reopen.is_some();
        let (kept, reopen) = match (whole.then(|| listing(&key)).flatten(), reopen) {
            // The kept walk's entries open from this call's root.
            (Some((steps, kept)), Some(reopen)) => {
                kept.take_root(&reopen);
                (Some(steps), Some(kept))
            }
            (_, reopen) => (None, reopen),
        };
        let record = RefCell::new((whole && kept.is_none() && generation().is_some()).then(Vec::new));
        Replay { key, kept, record, reopen }
    }

    /// Its steps: the kept ones, or those of `walk`.
    pub fn steps<'a>(&'a self, mut walk: impl Iterator<Item = Step> + 'a) -> impl Iterator<Item = Cow<'a, Step>> + 'a {
        let mut at = 0;
        std::iter::from_fn(move || {
            at += 1;
            self.step(at - 1, &mut walk)
        })
    }

    /// Step number `at` (steps are taken in order): the kept one, or the
    /// next of `walk` (the `at`th it gives).
    pub fn step(&self, at: usize, walk: &mut dyn Iterator<Item = Step>) -> Option<Cow<'_, Step>> {
        match &self.kept {
            Some(steps) => steps.get(at).map(Cow::Borrowed),
            None => {
                let step = walk.next()?;
                if let Some(record) = self.record.borrow_mut().as_mut() {
                    record.push(self.without_dir(step.clone()));
                }
                Some(Cow::Owned(step))
            }
        }
    }

    /// The marks of the kept walk replayed, if it is one: made by `make`
    /// once per walk and generation.
    pub fn marks(&self, make: impl FnOnce(&[Step]) -> Vec<u32>) -> Option<Rc<Vec<u32>>> {
        let steps = self.kept.as_ref()?;
        KEPT.with_borrow_mut(|k| {
            let kept = k.listings.get_mut(&self.key).filter(|w| Rc::ptr_eq(&w.steps, steps))?;
            Some(kept.marks.get_or_insert_with(|| Rc::new(make(steps))).clone())
        })
    }

    /// Step number `at` of the kept walk replayed, if it is one.
    pub fn kept_step(&self, at: usize) -> Option<&Step> {
        self.kept.as_ref()?.get(at)
    }

    /// A step found past the last one (entries denied at the walk's end).
    pub fn push(&self, step: Step) {
        if let Some(record) = self.record.borrow_mut().as_mut() {
            record.push(self.without_dir(step));
        }
    }

    /// `step` as kept: an entry holds no descriptor.
    fn without_dir(&self, step: Step) -> Step {
        match (step, &self.reopen) {
            (Step::Entry(e), Some(reopen)) => Step::Entry(e.kept(reopen)),
            (step, _) => step,
        }
    }

    /// Keeps the walk recorded, if it went through `whole` (no page full,
    /// no time out), and records no more.
    pub fn keep(&self, whole: bool) {
        if let Some((record, reopen)) = self.record.take().filter(|_| whole).zip(self.reopen.clone()) {
            keep_listing(self.key.clone(), record, reopen);
        }
    }

    /// Closes the directories its entries were opened from (when the walk is
    /// over): a kept walk holds no descriptor between calls.
    pub fn release(&self) {
        if let Some(reopen) = &self.reopen {
            reopen.release();
        }
    }
}

impl Drop for Replay {
    fn drop(&mut self) {
        self.release();
    }
}
