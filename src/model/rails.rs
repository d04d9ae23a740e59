//! Rails: calls and dollars per document and per run. A request reserves
//! one call and its worst-case price (every input token plus a reply at its
//! output cap) before it is sent and settles at its real price after, so
//! concurrent requests can never together pass a ceiling; a cached reply
//! releases its reservation (it costs nothing).

use std::collections::HashMap;
use std::sync::Mutex;

use super::{Limits, ModelError};
use crate::error::{QuarryError, Result};

#[derive(Debug, Default, Clone, Copy)]
struct Used {
    calls: u64,
    usd: f64,
}

/// The rails of one run.
#[derive(Debug)]
pub struct Rails {
    limits: Limits,
    state: Mutex<(Used, HashMap<String, Used>)>,
    /// Plans are checked against the whole ceiling, not what is left: the
    /// rails of one query's parts on a cluster executor, where what the
    /// run's other parts have sent is the same run's, already in its plan.
    plan_whole: bool,
}

/// One scope of ceilings (the run, or a document) and how to name it.
struct Scope<'a> {
    who: &'a str,
    calls_name: &'a str,
    usd_name: &'a str,
    after: &'a str,
}

impl Scope<'_> {
    /// Whether one more request at worst case `worst` fits under `max_calls`
    /// and `max_usd` given what is `used` (an unknown price skips the dollars).
    fn check(
        &self,
        used: Used,
        max_calls: Option<u64>,
        max_usd: Option<f64>,
        worst: Option<f64>,
    ) -> Result<(), ModelError> {
        let Scope {
            who,
            calls_name,
            usd_name,
            after,
        } = self;
        if let Some(max) = max_calls.filter(|m| used.calls >= *m) {
            return Err(ModelError::CallCap(format!(
                "{who} reached {calls_name} = {max}; {after}"
            )));
        }
        if let (Some(max), Some(w)) = (max_usd, worst) {
            if used.usd + w > max {
                return Err(ModelError::CostCap(format!(
                    "{who} has spent or reserved ${:.4} of {usd_name} = {max} and this request could \
                     cost up to ${w:.4}; {after}",
                    used.usd
                )));
            }
        }
        Ok(())
    }
}

/// A reservation made before a request.
#[derive(Debug)]
pub struct Reservation {
    doc: Option<String>,
    usd: f64,
}

impl Rails {
    /// Rails with these limits.
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            state: Mutex::new((Used::default(), HashMap::new())),
            plan_whole: false,
        }
    }

    /// Rails for the parts of one query on a cluster executor: a part's
    /// plan (the whole run's requests) is checked against the whole
    /// ceiling, since the sends of the run's other parts here are the same
    /// run's; requests are still reserved against it one by one.
    pub fn for_parts(limits: Limits) -> Self {
        Self {
            plan_whole: true,
            ..Self::new(limits)
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Calls and dollars used so far in the run (reservations included).
    pub fn used(&self) -> (u64, f64) {
        let s = self.state.lock().expect("rails lock");
        (s.0.calls, s.0.usd)
    }

    /// Refuses a plan that already exceeds a run ceiling, before anything is
    /// sent: `calls` requests whose worst case is `worst_usd` (unknown price:
    /// `None`, and only the call ceiling can be checked).
    pub fn check_plan(&self, calls: u64, worst_usd: Option<f64>) -> Result<()> {
        let (used_calls, used_usd) = if self.plan_whole {
            (0, 0.0)
        } else {
            self.used()
        };
        if let Some(max) = self.limits.max_total_calls {
            if used_calls + calls > max {
                return Err(QuarryError::Invalid(format!(
                    "call_cap: this would make at least {calls} model calls and the run has {} of \
                     max_total_calls = {max} left; filter the rows first, or raise the ceiling \
                     (QUARRY_MAX_TOTAL_CALLS or [limits] max_total_calls in quarry.toml)",
                    max.saturating_sub(used_calls)
                )));
            }
        }
        if let (Some(max), Some(w)) = (self.limits.max_total_usd, worst_usd) {
            if used_usd + w > max {
                return Err(QuarryError::Invalid(format!(
                    "cost_cap: the worst case of this plan ({calls} calls, every reply at its output \
                     cap) is ${w:.4}, and the run has ${:.4} of max_total_usd = {max} left; lower \
                     max_output, filter the rows first, or raise the ceiling (QUARRY_MAX_TOTAL_USD \
                     or [limits] max_total_usd in quarry.toml)",
                    (max - used_usd).max(0.0)
                )));
            }
        }
        Ok(())
    }

    /// Reserves one request for `doc` at worst case `worst_usd` (unknown
    /// price: no dollar check).
    pub fn reserve(
        &self,
        doc: Option<&str>,
        worst_usd: Option<f64>,
    ) -> Result<Reservation, ModelError> {
        let l = self.limits;
        let w = worst_usd.unwrap_or(0.0);
        let mut s = self.state.lock().expect("rails lock");
        let (run, docs) = &mut *s;
        let run_scope = Scope {
            who: "the run",
            calls_name: "max_total_calls",
            usd_name: "max_total_usd",
            after: "this request was not sent",
        };
        run_scope.check(*run, l.max_total_calls, l.max_total_usd, worst_usd)?;
        if let Some(d) = doc {
            let who = format!("document {d}");
            let doc_scope = Scope {
                who: &who,
                calls_name: "max_calls",
                usd_name: "max_cost_usd",
                after: "the rest of it is not read",
            };
            let u = docs.get(d).copied().unwrap_or_default();
            doc_scope.check(u, l.max_calls, l.max_cost_usd, worst_usd)?;
            let e = docs.entry(d.to_string()).or_default();
            e.calls += 1;
            e.usd += w;
        }
        run.calls += 1;
        run.usd += w;
        Ok(Reservation {
            doc: doc.map(str::to_string),
            usd: w,
        })
    }

    /// Settles a reservation: `sent` false releases the call (a cache hit);
    /// `usd` replaces the worst case with the real price.
    pub fn settle(&self, r: Reservation, sent: bool, usd: Option<f64>) {
        let mut s = self.state.lock().expect("rails lock");
        let (run, docs) = &mut *s;
        let delta_calls = if sent { 0 } else { 1 };
        let real = if sent { usd.unwrap_or(0.0) } else { 0.0 };
        run.calls -= delta_calls;
        run.usd += real - r.usd;
        if let Some(d) = r.doc {
            if let Some(e) = docs.get_mut(&d) {
                e.calls -= delta_calls;
                e.usd += real - r.usd;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query's parts check its whole plan against the whole ceiling,
    /// though its other parts have reserved; reservations still stop at it.
    #[test]
    fn parts_of_one_query_check_the_plan_against_the_whole_ceiling() {
        let limits = Limits {
            max_total_calls: Some(3),
            ..Default::default()
        };
        for (rails, plan_ok) in [
            (Rails::new(limits), false),
            (Rails::for_parts(limits), true),
        ] {
            let _a = rails.reserve(None, None).unwrap();
            assert_eq!(rails.check_plan(3, None).is_ok(), plan_ok);
            let _b = rails.reserve(None, None).unwrap();
            let _c = rails.reserve(None, None).unwrap();
            assert_eq!(
                rails.reserve(None, None).unwrap_err().class(),
                "call_cap_reached"
            );
        }
    }

    #[test]
    fn concurrent_reservations_cannot_pass_a_ceiling() {
        let r = Rails::new(Limits {
            max_total_usd: Some(1.0),
            max_calls: Some(2),
            ..Default::default()
        });
        let a = r.reserve(Some("d1"), Some(0.6)).unwrap();
        assert_eq!(
            r.reserve(Some("d2"), Some(0.6)).unwrap_err().class(),
            "cost_cap_reached"
        );
        r.settle(a, true, Some(0.1));
        let _b = r.reserve(Some("d1"), Some(0.6)).unwrap();
        assert_eq!(
            r.reserve(Some("d1"), Some(0.0)).unwrap_err().class(),
            "call_cap_reached"
        );
        assert!(r.reserve(Some("d2"), Some(0.2)).is_ok());
    }

    #[test]
    fn plan_over_the_run_ceiling_is_refused_up_front() {
        let r = Rails::new(Limits {
            max_total_calls: Some(10),
            ..Default::default()
        });
        assert!(r.check_plan(10, None).is_ok());
        let e = r.check_plan(11, None).unwrap_err().to_string();
        assert!(e.contains("max_total_calls = 10"), "{e}");
    }
}
