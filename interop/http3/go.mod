module github.com/teebody/teebody/interop/http3

go 1.26.0

replace github.com/teebody/teebody => ../..

require (
	github.com/quic-go/quic-go v0.65.0
	github.com/teebody/teebody v0.0.0-20261207222943-59172517c9a5
	go.uber.org/goleak v1.3.0
)

require (
	github.com/quic-go/qpack v0.6.0 // indirect
	golang.org/x/crypto v0.54.0 // indirect
	golang.org/x/net v0.56.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.40.0 // indirect
)
