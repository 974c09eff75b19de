package teebodycaddy_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// adminPort is the in-process Caddy's admin port, free when TestMain ran.
var adminPort int

// TestMain runs the tests, then checks with goleak that no goroutine is left
// but Caddy's own long-lived ones (caddyGoroutines). caddytest starts Caddy
// in this process the first time a test loads a config, and nothing can stop
// that Caddy; so TestMain loads an empty config last, which stops the HTTP
// servers and the goroutines of the config the last test left running.
func TestMain(m *testing.M) {
	p, err := freePort()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	adminPort = p
	code := m.Run()
	if code == 0 {
		err := unloadConfig()
		// caddytest's own requests to the admin endpoint go over
		// http.DefaultTransport.
		http.DefaultTransport.(*http.Transport).CloseIdleConnections()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		} else if err := goleak.Find(caddyGoroutines()...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: Errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// unloadConfig loads, into the in-process Caddy if it runs, a config with
// nothing but its admin endpoint.
func unloadConfig() error {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	admin := fmt.Sprintf("localhost:%d", adminPort)
	resp, err := client.Get("http://" + admin + "/config/")
	if err != nil {
		return nil // no test started Caddy
	}
	resp.Body.Close()
	resp, err = client.Post("http://"+admin+"/load", "application/json",
		strings.NewReader(fmt.Sprintf(`{"admin":{"listen":%q}}`, admin)))
	if err != nil {
		return fmt.Errorf("unloading the last config: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("unloading the last config: %s: %s", resp.Status, b)
	}
	return nil
}

// freePort returns a TCP port on loopback that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
