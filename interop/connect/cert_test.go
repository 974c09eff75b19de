package connect_test

import "github.com/teebody/teebody/internal/proxytest/testcert"

// testCert returns a self-signed certificate for loopback and a pool that
// trusts it, made once per test binary.
var testCert = testcert.Loopback
