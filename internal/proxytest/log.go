package proxytest

import (
	"io"
	"log"
)

// QuietLog returns a logger that discards everything, for the ErrorLog of
// servers and proxies whose expected errors (connections ended on purpose)
// would only clutter a test's output.
func QuietLog() *log.Logger { return log.New(io.Discard, "", 0) }
