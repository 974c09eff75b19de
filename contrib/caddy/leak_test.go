package teebodycaddy_test

import "go.uber.org/goleak"

// caddyGoroutines are the goroutines of the Caddy that caddytest runs in this
// process which no config load stops, each named by the function that runs
// it in Caddy (or certmagic):
//
//   - caddytest's `caddy run` (cmd.cmdRun blocks for ever once Caddy runs);
//   - the two signal handlers it installs (trapSignalsCrossPlatform,
//     trapSignalsPosix);
//   - the admin endpoint's server (replaceLocalAdminServer), which every
//     config keeps;
//   - certmagic's refresher of a storage lock file (keepLockfileFresh),
//     which wakes every 5 s and exits at its first wake after the lock is
//     released: a storage-cleaning lock of a config's TLS app.
func caddyGoroutines() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("github.com/caddyserver/caddy/v2/cmd.cmdRun"),
		goleak.IgnoreTopFunction("github.com/caddyserver/caddy/v2.trapSignalsCrossPlatform.func1"),
		goleak.IgnoreTopFunction("github.com/caddyserver/caddy/v2.trapSignalsPosix.func1"),
		goleak.IgnoreAnyFunction("github.com/caddyserver/caddy/v2.replaceLocalAdminServer.func2"),
		goleak.IgnoreAnyFunction("github.com/caddyserver/certmagic.keepLockfileFresh"),
	}
}
