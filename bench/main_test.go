package bench

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(roleEnv); role != "" {
		os.Exit(runRole(role)) // a process of BenchmarkOutOfProcess, not a test run
	}
	goleak.VerifyTestMain(m)
}
