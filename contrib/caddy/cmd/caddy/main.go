// Command caddy is Caddy with its standard modules and teebody's transport
// module, http.reverse_proxy.transport.teebody: what `xcaddy build --with
// github.com/teebody/teebody/contrib/caddy` builds. The end-to-end suite
// builds it (e2e/build.sh).
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/teebody/teebody/contrib/caddy"
)

func main() {
	caddycmd.Main()
}
