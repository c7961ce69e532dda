package conversation

import (
	"context"
	"testing"
	"time"
)

// The check the Stop hook makes at every turn end when nothing is queued.
func BenchmarkHasPendingEmpty(b *testing.B) {
	s := newSession(b)
	for b.Loop() {
		if has, err := s.hasPending(); has || err != nil {
			b.Fatal(has, err)
		}
	}
}

func BenchmarkEnqueue(b *testing.B) {
	s := newSession(b)
	for b.Loop() {
		if _, err := s.Enqueue("bench", "hello"); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		s.Claim(LaneHook)
		b.StartTimer()
	}
}

// Enqueue -> claimed by an armed waiter (the idle lane's latency, fsnotify
// wake-up included). Reports the median as p50-ns.
func BenchmarkEnqueueToClaimedWait(b *testing.B) {
	s := newSession(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	claimed := make(chan time.Time, 1)
	go func() {
		for {
			res, err := s.waitClaim(ctx, LaneRewake, true, time.Minute)
			if err != nil {
				return
			}
			if res.OK {
				claimed <- time.Now()
			}
		}
	}()
	time.Sleep(50 * time.Millisecond) // let the watcher arm
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := s.Enqueue("bench", "ping"); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-claimed).Sub(start))
	}
	b.ReportMetric(float64(median(lat).Nanoseconds()), "p50-ns")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}
