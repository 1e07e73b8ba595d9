//! Memory cache of plans, keyed by [`PlanKey`].
//!
//! OP2 builds a plan the first time a loop runs with a given set, range, part size and indirect
//! argument signature, and reuses it on every later call (Airfoil's `res_calc` runs thousands of
//! times with one plan). Keys are made of ids and sizes only, so equal keys mean equal plans;
//! plans are shared as `Arc` so a backend can hold one while the cache lives on.

use std::collections::HashMap;
use std::sync::Arc;

use super::desc::{PlanKey, PlanRequest};
use super::error::PlanError;
use super::Plan;

/// Plans built so far.
#[derive(Debug, Default)]
pub struct PlanCache {
    plans: HashMap<PlanKey, Arc<Plan>>,
}

impl PlanCache {
    /// An empty cache.
    pub fn new() -> PlanCache {
        PlanCache::default()
    }

    /// The plan for `req`, built on first use. A request that fails to build is not cached.
    pub fn get_or_build(&mut self, req: &PlanRequest<'_>) -> Result<Arc<Plan>, PlanError> {
        let key = req.key();
        if let Some(p) = self.plans.get(&key) {
            return Ok(Arc::clone(p));
        }
        let plan = Arc::new(Plan::build(req)?);
        self.plans.insert(key, Arc::clone(&plan));
        Ok(plan)
    }

    /// Number of cached plans.
    pub fn len(&self) -> usize {
        self.plans.len()
    }

    /// Whether no plan is cached.
    pub fn is_empty(&self) -> bool {
        self.plans.is_empty()
    }

    /// Drops every cached plan (plans still held elsewhere live on).
    pub fn clear(&mut self) {
        self.plans.clear();
    }
}
