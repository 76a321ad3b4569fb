package handlers

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// rateLimiter keeps one token bucket per authenticated token, so one noisy
// token cannot starve the others. Buckets idle long enough to have refilled
// are dropped: recreating one is then indistinguishable from keeping it,
// which bounds the map by the number of recently active tokens.
type rateLimiter struct {
	rps   rate.Limit
	burst int

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// newRateLimiter allows rps requests per second with bursts of burst per key;
// rps <= 0 disables limiting.
func newRateLimiter(rps float64, burst int) *rateLimiter {
	if rps <= 0 {
		return nil
	}
	if burst < 1 {
		burst = max(1, int(math.Ceil(rps)))
	}
	return &rateLimiter{rps: rate.Limit(rps), burst: burst, buckets: map[string]*bucket{}}
}

// allow takes one request from key's bucket, or says how long to wait.
func (l *rateLimiter) allow(key string, now time.Time) (bool, time.Duration) {
	return l.reserve(key, now, 0)
}

// reserve takes one request from key's bucket and says how long it waits for
// its turn, up to maxWait; beyond that it is refused (false) with how long
// until it would fit. Waiting instead of refusing slows a fleet of agents
// sharing a token to the rate rather than answering it 429 (clients rarely
// retry); a runaway is held to the rate, and more requests queued than
// maxWait covers are refused.
func (l *rateLimiter) reserve(key string, now time.Time, maxWait time.Duration) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	b := l.buckets[key]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.rps, l.burst)}
		l.buckets[key] = b
	}
	b.seen = now
	res := b.lim.ReserveN(now, 1)
	if !res.OK() {
		return false, time.Second
	}
	if d := res.DelayFrom(now); d > maxWait {
		res.CancelAt(now) // a refused request must not use up future capacity
		return false, d - maxWait
	} else if d > 0 {
		return true, d
	}
	return true, 0
}

func (l *rateLimiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < time.Minute {
		return
	}
	l.lastSweep = now
	refill := time.Duration(float64(l.burst)/float64(l.rps)*float64(time.Second)) + time.Second
	for k, b := range l.buckets {
		if now.Sub(b.seen) > refill {
			delete(l.buckets, k)
		}
	}
}

// retryAfterSeconds is the Retry-After value for a wait of d: whole seconds,
// rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// exhausted reports, without taking anything, whether key's bucket is empty
// and how long until it holds one request again. Used for failed logins: each
// failure is charged with allow, and a client whose failure budget is spent is
// refused before its next guess costs a token lookup.
func (l *rateLimiter) exhausted(key string, now time.Time) (bool, time.Duration) {
	if l == nil {
		return false, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[key]
	if b == nil {
		return false, 0
	}
	tokens := b.lim.TokensAt(now)
	if tokens >= 1 {
		return false, 0
	}
	return true, time.Duration((1 - tokens) / float64(l.rps) * float64(time.Second))
}
