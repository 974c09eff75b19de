//go:build race

package transport_test

// raceEnabled is true when the race detector is on: it makes sync.Pool drop
// items at random, so allocation counts mean nothing then.
const raceEnabled = true
