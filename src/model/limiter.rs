//! One limiter per endpoint: requests in flight (a semaphore), requests per
//! minute and tokens per minute (token buckets). Waiting is async, so a
//! request held back never blocks the executor.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Mutex, OwnedSemaphorePermit, Semaphore};

/// A token bucket refilled continuously at `per_minute / 60` a second.
#[derive(Debug)]
struct Bucket {
    capacity: f64,
    tokens: f64,
    per_sec: f64,
    last: Instant,
}

impl Bucket {
    fn new(per_minute: f64) -> Self {
        Self {
            capacity: per_minute,
            tokens: per_minute,
            per_sec: per_minute / 60.0,
            last: Instant::now(),
        }
    }

    /// Takes `n` (capped at the capacity, so an oversized request waits for a
    /// full bucket rather than forever), or says how long to wait.
    fn take(&mut self, n: f64) -> Option<Duration> {
        let now = Instant::now();
        self.tokens =
            (self.tokens + (now - self.last).as_secs_f64() * self.per_sec).min(self.capacity);
        self.last = now;
        let n = n.min(self.capacity);
        if self.tokens >= n {
            self.tokens -= n;
            None
        } else {
            Some(Duration::from_secs_f64((n - self.tokens) / self.per_sec))
        }
    }
}

/// The limits of one endpoint.
#[derive(Debug, Clone)]
pub struct Limiter {
    in_flight: Arc<Semaphore>,
    requests: Option<Arc<Mutex<Bucket>>>,
    tokens: Option<Arc<Mutex<Bucket>>>,
}

/// Held while a request is in flight.
#[derive(Debug)]
pub struct Permit {
    _permit: OwnedSemaphorePermit,
}

impl Limiter {
    /// `max_in_flight` at once; `rpm`/`tpm` of 0 mean no limit.
    pub fn new(max_in_flight: usize, rpm: u32, tpm: u64) -> Self {
        Self {
            in_flight: Arc::new(Semaphore::new(max_in_flight.max(1))),
            requests: (rpm > 0).then(|| Arc::new(Mutex::new(Bucket::new(rpm as f64)))),
            tokens: (tpm > 0).then(|| Arc::new(Mutex::new(Bucket::new(tpm as f64)))),
        }
    }

    /// Waits for a slot: the per-minute buckets first (so a request waiting
    /// for its minute does not hold a slot), then the in-flight semaphore.
    pub async fn acquire(&self, est_tokens: u64) -> Permit {
        for (bucket, n) in [(&self.requests, 1.0), (&self.tokens, est_tokens as f64)] {
            if let Some(b) = bucket {
                loop {
                    let wait = b.lock().await.take(n);
                    match wait {
                        None => break,
                        Some(d) => tokio::time::sleep(d).await,
                    }
                }
            }
        }
        let permit = self
            .in_flight
            .clone()
            .acquire_owned()
            .await
            .expect("the limiter's semaphore is never closed");
        Permit { _permit: permit }
    }

    /// Slots free right now.
    pub fn available(&self) -> usize {
        self.in_flight.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn in_flight_is_bounded() {
        let l = Limiter::new(2, 0, 0);
        let a = l.acquire(1).await;
        let _b = l.acquire(1).await;
        assert_eq!(l.available(), 0);
        drop(a);
        assert_eq!(l.available(), 1);
    }

    #[tokio::test]
    async fn requests_per_minute_spaces_requests() {
        // 600 a minute is one every 100 ms once the first minute's burst is spent.
        let mut b = Bucket::new(600.0);
        b.tokens = 0.0;
        let w = b.take(1.0).expect("empty bucket waits");
        assert!(
            w > Duration::from_millis(90) && w < Duration::from_millis(110),
            "{w:?}"
        );
    }
}
