//go:build !race

package teebody

const raceEnabled = false
